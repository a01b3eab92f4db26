"""``auralgen listen``: a listening test for people on the items and adaptive tracks models are scored on.

A local web app (Starlette, served by uvicorn; plain HTML/CSS/JS) runs one participant at a time
through consent, a volume step, a headphone screening (:mod:`.screening`), practice trials with
feedback, then test trials without: a **fixed** block (items of a generated dataset, in a seeded
order) and **adaptive** tracks (the QUEST+ :class:`~auralgen.evaluation.procedure.Procedure` of
``mode=adaptive``, items made at the level it asks for, tracks interleaved).

- :mod:`.study` -- the study file (YAML): what is asked, texts, audio format, access;
- :mod:`.sound` -- one equal-size WAV per trial (nothing in the file depends on the answer);
- :mod:`.screening` -- the Woods et al. (2017) antiphase headphone screening;
- :mod:`.store` -- SQLite (WAL) under the study's out folder, one row per trial;
- :mod:`.schedule` -- what a participant is asked next (fixed order, practice, adaptive tracks);
- :mod:`.session` -- the participant's state: the screen to show, answers recorded;
- :mod:`.app` -- the HTTP side (no answer, level or ``params`` ever reaches the browser);
- :mod:`.report` -- accuracy per task and level, thresholds with 95 % intervals, per participant and pooled.
"""
