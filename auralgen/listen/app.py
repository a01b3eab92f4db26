"""The HTTP side of ``auralgen listen``: a Starlette app (served by uvicorn, :func:`serve`).

Participant routes (``GET /``, ``/static/*``, ``/api/state``, ``POST /api/consent|volume|answer``,
``GET /audio/<trial id>``) know the participant by a random session key in an HttpOnly cookie (the
database keeps its SHA-256): a participant reaches their own trials only, and only the pending one's
audio. JSON carries the question, the shown options and an opaque trial id; answers, levels, item
ids and ``params`` stay on the server (a practice answer's feedback names the right option after
the answer). Every audio response has the same headers and byte size (:mod:`.sound`), ``no-store``.

Access: on 127.0.0.1 (the default) the page is open to that machine. On any other interface every
participant link must carry the study token (``/?t=<token>``; the page keeps it in a cookie);
without it every route answers 403. ``GET /results`` (every stored row, answers included) is for
the experimenter only: it needs ``Authorization: Bearer <key>``, the key in ``<out>/experimenter.key``.
The study token is the study file's ``token`` or one drawn once into ``<out>/study.token``, so links
survive a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .schedule import Schedule
from .session import Session
from .sound import calibration_tone
from .store import Store
from .study import StudyConfig

__all__ = ["LOOPBACK", "create_app", "experimenter_key", "serve"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
KEY_COOKIE, TOKEN_COOKIE = "auralgen_key", "auralgen_study"
NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
STATIC = {"app.js": "text/javascript", "style.css": "text/css"}


def experimenter_key(out: str | Path, name: str = "experimenter.key") -> str:
    """The experimenter's key of the study in ``out`` (``<out>/experimenter.key``, drawn once, mode 0600);
    ``name="study.token"``: the study token of participant links, kept the same way across restarts.

    Parameters
    ----------
    out : str or Path
        The study's out folder (created if absent).
    name : str, optional
        The key file's name in ``out`` (default ``experimenter.key``).

    Returns
    -------
    str
        The key: 48 hex characters, drawn once and then read back from the file.
    """
    path = Path(out) / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(secrets.token_hex(24) + "\n")
    return path.read_text(encoding="utf-8").strip()


def _static(name: str) -> str:
    return resources.files("auralgen.listen").joinpath("static", name).read_text(encoding="utf-8")


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class _Routes:
    """The app's handlers over one study's session and store."""

    def __init__(self, study: StudyConfig, session: Session, store: Store):
        self.study, self.session, self.store = study, session, store
        self.admin = experimenter_key(study.out)
        self.calibration = calibration_tone(study.audio)

    def participant(self, request: Request, *, create: bool = False) -> str | None:
        key = request.cookies.get(KEY_COOKIE)
        row = self.store.participant_by_key(_hash(key)) if key else None
        if row is not None:
            return row["pid"]
        if not create:
            return None
        key = secrets.token_urlsafe(32)
        request.state.new_key = key
        return self.store.create_participant(_hash(key))

    @staticmethod
    def reply(request: Request, body: dict, status: int = 200) -> JSONResponse:
        resp = JSONResponse(body, status_code=status, headers=NO_STORE)
        new = getattr(request.state, "new_key", None)
        if new:
            resp.set_cookie(KEY_COOKIE, new, max_age=180 * 86400, httponly=True, samesite="strict")
        return resp

    def index(self, request: Request) -> Response:
        return HTMLResponse(_static("index.html").replace("{{title}}", _escape(self.study.title)), headers=NO_STORE)

    def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return PlainTextResponse("not found", status_code=404)
        return Response(_static(name), media_type=STATIC[name], headers=NO_STORE)

    def state(self, request: Request) -> Response:
        return self.reply(request, self.session.state(self.participant(request, create=True)))

    async def act(self, request: Request) -> Response:
        pid = self.participant(request)
        if pid is None:
            return self.reply(request, {"error": "no session; allowed: load the study page first"}, 401)
        action = request.path_params["action"]
        if action not in ("consent", "volume", "answer"):
            return self.reply(request, {"error": f"action {action!r}; allowed: consent, volume, answer"}, 404)
        try:
            body = await request.json() if action == "answer" else {}
        except ValueError:
            body = {}
        return self.reply(request, await _run(self.session, pid, action, body if isinstance(body, dict) else {}))

    def audio(self, request: Request) -> Response:
        pid = self.participant(request)
        token = request.path_params["token"]
        if pid is None:
            wav = None
        else:
            wav = self.calibration if token == "calibration" else self.session.audio(pid, token)
        if wav is None:
            return PlainTextResponse("no such sound", status_code=404, headers=NO_STORE)
        return Response(wav, media_type="audio/wav", headers=NO_STORE)

    def results(self, request: Request) -> Response:
        auth = request.headers.get("authorization", "")
        if not hmac.compare_digest(auth.encode(), f"Bearer {self.admin}".encode()):
            return JSONResponse({"error": "experimenter only: Authorization: Bearer <out>/experimenter.key"}, 403)
        body = {"participants": _public(self.store.participants()), "trials": self.store.trials(answered=False)}
        return JSONResponse(body, headers=NO_STORE)


def create_app(study: StudyConfig, *, token: str | None = None, schedule: Schedule | None = None) -> Starlette:
    """The app of ``study``; with ``token``, every route needs it (see the module docstring).

    Parameters
    ----------
    study : StudyConfig
        The checked study; its database and experimenter key live in ``study.out``.
    token : str or None, optional
        The study token every participant route requires; None leaves the routes open (loopback).
    schedule : Schedule or None, optional
        What participants are asked; None builds :class:`~auralgen.listen.schedule.Schedule` of ``study``.

    Returns
    -------
    Starlette
        The ASGI app; ``app.state.session`` and ``app.state.store`` hold its session and store.
    """
    store = Store(study.db_path)
    session = Session(schedule or Schedule(study), store)
    r = _Routes(study, session, store)
    routes = [
        Route("/", r.index),
        Route("/static/{name}", r.static),
        Route("/api/state", r.state),
        Route("/api/{action:str}", r.act, methods=["POST"]),
        Route("/audio/{token:str}", r.audio),
        Route("/results", r.results),
    ]
    app = Starlette(routes=routes)
    app.state.session, app.state.store = session, store
    if token is not None:
        app.add_middleware(_TokenGate, token=token)
    return app


async def _run(session: Session, pid: str, action: str, body: dict) -> dict:
    from starlette.concurrency import run_in_threadpool

    if action == "consent":
        await run_in_threadpool(session.consent, pid)
    elif action == "volume":
        await run_in_threadpool(session.volume, pid)
    elif action == "answer":
        choice, rt = body.get("choice"), body.get("rt_ms")
        if not isinstance(choice, int) or not isinstance(body.get("id"), str):
            return {"error": "answer needs id (str) and choice (int)", "state": session.state(pid)}
        rt = float(rt) if isinstance(rt, (int, float)) else None
        return await run_in_threadpool(session.answer, pid, body["id"], choice, rt)
    return await run_in_threadpool(session.state, pid)


def _public(participants: list[dict]) -> list[dict]:
    return [{k: v for k, v in p.items() if k != "key_hash"} for p in participants]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


class _TokenGate:
    """Every request needs the study token: ``?t=<token>`` (then kept in a cookie) or that cookie;
    ``/results`` is gated by the experimenter key instead."""

    def __init__(self, app, token: str):
        self.app, self.token = app, token

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] == "/results":
            return await self.app(scope, receive, send)
        request = Request(scope)
        given = request.query_params.get("t") or request.cookies.get(TOKEN_COOKIE) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            resp = PlainTextResponse("this study needs its participant link (with the study token)", status_code=403)
            return await resp(scope, receive, send)

        async def send_with_cookie(message):
            if message["type"] == "http.response.start" and request.query_params.get("t"):
                cookie = f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            await send(message)

        return await self.app(scope, receive, send_with_cookie)


def serve(study: StudyConfig, *, host: str = "127.0.0.1", port: int = 8000, log=print) -> None:
    """Serve ``study`` with uvicorn until interrupted; off loopback a study token gates every link.

    Parameters
    ----------
    study : StudyConfig
        The checked study.
    host : str, optional
        Interface to listen on (default ``127.0.0.1``); any other than loopback needs the study token.
    port : int, optional
        TCP port (default 8000).
    log : callable, optional
        Receives the participant link and the experimenter's instructions, one line each (default ``print``).
    """
    import uvicorn

    token = None if host in LOOPBACK else (study.token or experimenter_key(study.out, "study.token"))
    app = create_app(study, token=token)
    shown = f"[{host}]" if ":" in host else host
    link = f"http://{shown}:{port}/" + (f"?t={token}" if token else "")
    log(f"participant link: {link}")
    log(
        f"experimenter: GET http://{shown}:{port}/results with Authorization: Bearer "
        f"<{Path(study.out) / 'experimenter.key'}>"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
