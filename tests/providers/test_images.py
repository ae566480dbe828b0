"""Images as context through the language server to both APIs (loopback servers): the exact
content parts each API gets, one stored file per picture, and the refusals before any call."""

from __future__ import annotations

import base64
import io
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from openprogram_lsp.core import images
from openprogram_lsp.core.images import ImageBlobs
from openprogram_lsp.core.transcript import without_environment
from openprogram_lsp.core.types import Message
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.base import ModelRequest
from openprogram_lsp.providers.http import HttpSettings
from openprogram_lsp.providers.images import ANTHROPIC, ImageLimits, check_images
from tests import forkserver
from tests.imagefiles import gif, jpeg, png, png_header
from tests.lsp.conftest import OpClient, Starter, start  # noqa: F401  (fixture)

from .loopback import LoopbackServer, Reply
from .test_end_to_end import COMMAND
from .test_lsp_models import model_env  # noqa: F401  (fixture)
from .wire import AnthropicStream, Call, OpenAIStream, fragments


def _exact(obj: Any) -> bytes:
    """``obj`` as the request body spells it (compact JSON, UTF-8)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _blobs(home: Path) -> list[Path]:
    return [p for p in (home / "images").glob("??/*") if p.is_file()]


async def test_openai_gets_image_url_parts_and_one_blob_per_picture(
        start: Starter, model_env: LoopbackServer, workspace: Path,  # noqa: F811
        tmp_path: Path) -> None:
    server = model_env
    shot = png(6, 4)
    (workspace / "shot.png").write_bytes(shot)
    server.queue(*(Reply(chunks=OpenAIStream(model="gpt-4o", text=[f"Seen {n}."]).events())
                   for n in range(3)))
    client = await start()
    url = (workspace / "shot.png").as_uri()
    first = await client.call("openprogram/chat", {
        "text": "what is wrong here?", "model": "openai:gpt-4o",
        "context": [{"kind": "image", "uri": url}]})
    assert first["status"] == "done", first
    b64 = base64.b64encode(shot).decode()
    text = server.received[0].json["messages"][1]["content"][0]["text"]
    assert without_environment(text) == ('<context>\n<image path="shot.png" type="image/png" '
                                         'pixels="6x4"/>\n</context>\n\nwhat is wrong here?')
    user = {"role": "user", "content": [
        {"type": "text", "text": text},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}]}
    assert _exact(user) in server.received[0].body  # the user message, byte for byte
    # the same picture again, pasted (as data, claimed to be a JPEG: the bytes decide)
    second = await client.call("openprogram/chat", {
        "text": "and now?", "sessionId": first["sessionId"], "model": "openai:gpt-4o",
        "context": [{"kind": "image", "uri": "clipboard:paste",
                                         "data": b64, "mediaType": "image/jpeg"}]})
    assert second["status"] == "done", second
    sent = server.received[1].json["messages"]
    urls = [p["image_url"]["url"] for m in sent if isinstance(m["content"], list)
            for p in m["content"] if p["type"] == "image_url"]
    assert urls == [f"data:image/png;base64,{b64}"] * 2  # history keeps the first one
    # a fork after the first reply, with the same picture: still one stored file
    fork = await client.call("openprogram/fork", {
        "sessionId": first["sessionId"], "fromNodeId": first["assistantNodeId"],
        "text": "again", "model": "openai:gpt-4o", "context": [{"kind": "image", "uri": url}]})
    assert fork["status"] == "done", fork
    blobs = _blobs(tmp_path / "home")
    assert len(blobs) == 1 and blobs[0].read_bytes() == shot
    page = await client.call("openprogram/history", {"sessionId": first["sessionId"]})
    assert b64 not in json.dumps(page)  # nodes carry the record, never the bytes
    [record] = [c for n in page["nodes"] for c in n.get("context", [])][:1]
    shown = await client.call("openprogram/image", {"sha256": record["sha256"]})
    assert shown == {"mediaType": "image/png", "data": b64}  # a thumbnail, on demand
    for bad, why in (({"sha256": "0" * 64}, "no stored image"), ({"sha256": "../x"}, "sha256")):
        with pytest.raises(Exception, match=why):
            await client.call("openprogram/image", bad)
    assert not [f for f in (tmp_path / "home").rglob("*")
                if f.is_file() and f not in blobs and b64.encode() in f.read_bytes()]


async def test_anthropic_gets_base64_image_blocks_before_the_text(
        start: Starter, model_env: LoopbackServer, workspace: Path) -> None:  # noqa: F811
    server = model_env
    photo = jpeg(30, 20)
    server.queue(Reply(chunks=AnthropicStream(text=["A photo."]).events()))
    client = await start()
    result = await client.call("openprogram/chat", {
        "text": "describe", "model": "anthropic:claude-test",
        "context": [{"kind": "image", "uri": "clipboard:photo.jpg", "name": "photo.jpg",
                     "data": base64.b64encode(photo).decode()}]})
    assert result["status"] == "done", result
    user = server.received[0].json["messages"][0]
    assert user["content"][0] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/jpeg",
        "data": base64.b64encode(photo).decode()}}
    assert without_environment(user["content"][1]["text"]).endswith("\n\ndescribe")
    assert _exact({"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                     "data": base64.b64encode(photo).decode()}},
        {"type": "text", "text": user["content"][1]["text"],
         "cache_control": {"type": "ephemeral"}}]}) in server.received[0].body


async def test_a_model_that_does_not_see_is_refused_before_any_call(
        start: Starter, model_env: LoopbackServer, workspace: Path) -> None:  # noqa: F811
    server = model_env
    client = await start()
    result = await client.call("openprogram/chat", {
        "text": "look", "model": "openai:gpt-3.5-turbo",
        "context": [{"kind": "image", "uri": "clipboard:a.png",
                     "data": base64.b64encode(png()).decode()}]})
    assert result["status"] == "error"
    message = result["error"]["message"]
    assert "gpt-3.5-turbo does not take images" in message and "\n" not in message
    assert server.received == []


async def test_an_image_over_the_api_limit_is_downscaled_and_the_user_told(
        start: Starter, model_env: LoopbackServer, workspace: Path,  # noqa: F811
        tmp_path: Path) -> None:
    server = model_env
    # over Anthropic's 3.75 MB (5 MB of base64): random pixels do not compress
    big = png(2100, 2000, seed=1, noise=True)
    assert len(big) > 4 * 1024 * 1024
    server.queue(Reply(chunks=AnthropicStream(text=["Noise."]).events()))
    client = await start()
    result = await client.call("openprogram/chat", {
        "text": "look", "model": "anthropic:claude-test",
        "context": [{"kind": "image", "uri": "clipboard:big.png", "name": "big.png",
                     "data": base64.b64encode(big).decode()}]})
    assert result["status"] == "done", result
    [note] = result["warnings"]
    assert note.startswith("image big.png (2100x2000, ") and "was downscaled to " in note
    [block] = [b for b in server.received[0].json["messages"][0]["content"]
               if b["type"] == "image"]
    sent = base64.b64decode(block["source"]["data"])
    assert len(sent) <= 5 * 1024 * 1024 * 3 // 4 and sent.startswith(b"\x89PNG")
    [blob] = _blobs(tmp_path / "home")  # only the downscaled picture is kept
    assert blob.read_bytes() == sent
    page = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
    [record] = [c for n in page["nodes"] for c in n.get("context", [])]
    assert record["original"] == {"width": 2100, "height": 2000, "size": len(big)}
    assert record["size"] == len(sent) and record["width"] < 2100


def test_request_limits_send_fitted_copies_and_leave_out_the_oldest_over_the_count(
        tmp_path: Path) -> None:
    blobs = ImageBlobs(tmp_path / "images")
    wide = blobs.put(png(2400, 10), "wide.png")
    small = [blobs.put(png(4, 4, seed=i)) for i in range(20)]
    one = [Message(role="user", content="a", images=[wide])]
    sees, out = check_images(one, provider="anthropic", model="m", sees=True, limits=ANTHROPIC)
    assert sees and out is one  # 2400 a side is within 8000: sent as it is
    many = [Message(role="user", content="a", images=[wide, *small])]  # 21 images
    _, out = check_images(many, provider="anthropic", model="m", sees=True, limits=ANTHROPIC)
    first = out[0].images[0]
    assert (first.width, first.height) == (2000, 8) and first.original is not None
    assert out[0].images[1:] == small  # within 2000 a side: unchanged
    # the request's total over the API's: each image sent at its share of it
    tight = ImageLimits(max_bytes=10**6, max_side=8000, max_count=5, max_total=wide.size)
    pair = [Message(role="user", content="a", images=[wide, small[0]])]
    _, out = check_images(pair, provider="openai", model="m", sees=True, limits=tight)
    assert out[0].images[0].size <= wide.size // 2 and out[0].images[1] == small[0]
    # more images than a request takes: the oldest are left out, the model told of each
    _, out = check_images(many, provider="openai", model="m", sees=True, limits=tight)
    assert out[0].images == small[-5:]
    assert out[0].content.splitlines()[1:] == [
        f"[image {i.name or i.sha256[:12]} not shown: a request takes at most 5 images, and "
        "newer ones follow]" for i in [wide, *small[:15]]]


@pytest.mark.parametrize(("data", "why"), [
    (base64.b64encode(b"GIF8 not really").decode(), "not a PNG, JPEG, GIF or WebP"),
    ("%%%not base64", "not valid base64"),
    (base64.b64encode(b"\x89PNG\r\n\x1a\n").decode(), "dimensions cannot be read"),
    (base64.b64encode(png_header(9000, 10)).decode(), "cannot be decoded")])
async def test_bad_image_data_is_invalid_params_naming_the_field(
        start: Starter, workspace: Path, data: str, why: str) -> None:  # noqa: F811
    client = await start()
    with pytest.raises(Exception) as err:
        await client.call("openprogram/chat", {
            "text": "look", "context": [{"kind": "image", "uri": "clipboard:x", "data": data}]})
    assert why in str(err.value) and "context[0]" in str(err.value)
    assert (await client.call("openprogram/sessions", {}))  # still serving


async def test_an_image_file_outside_the_workspace_must_come_as_data(
        start: Starter, workspace: Path, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / "outside.png").write_bytes(png())
    client = await start()
    with pytest.raises(Exception) as err:
        await client.call("openprogram/chat", {
            "text": "look", "context": [{"kind": "image",
                                         "uri": (tmp_path / "outside.png").as_uri()}]})
    assert "outside the workspace" in str(err.value)


def test_cli_chat_image_flags_attach_each_picture(server: LoopbackServer,
                                                  tmp_path: Path) -> None:
    ws = tmp_path / "ws-cli"
    ws.mkdir()
    (ws / "a.png").write_bytes(png(8, 8))
    (tmp_path / "b.gif").write_bytes(gif())
    (ws / "fake.png").write_bytes(b"just text, named .png\n")
    server.queue(Reply(chunks=AnthropicStream(text=["Two pictures."]).events()))
    env = {**os.environ, "OPENPROGRAM_HOME": str(tmp_path / "home"),
           "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test"}
    base = [*COMMAND, "chat", "--model", "anthropic:claude-test", "--workspace", str(ws)]
    r = forkserver.run_command([*base, "--image", str(ws / "a.png"), "--image",
                                str(tmp_path / "b.gif"), "compare"], env=env, cwd=ws,
                               timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Two pictures." in r.stdout
    [got] = server.received
    blocks = got.json["messages"][0]["content"]
    assert [b["source"]["media_type"] for b in blocks if b["type"] == "image"] \
        == ["image/png", "image/gif"]
    assert base64.b64decode(blocks[0]["source"]["data"]) == png(8, 8)
    bad = forkserver.run_command([*base, "--image", str(ws / "fake.png"), "look"], env=env,
                                 cwd=ws, timeout=120)
    assert bad.returncode != 0
    assert "--image" in bad.stderr and "not a PNG, JPEG, GIF or WebP image" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) <= 2  # the error, and maybe a hint
    assert len(server.received) == 1


@pytest.mark.parametrize("model", ["anthropic:claude-test", "openai:gpt-4o", "openai:gpt-test"])
async def test_read_file_of_an_image_shows_it_to_a_model_that_sees(
        start: Starter, model_env: LoopbackServer, workspace: Path,  # noqa: F811
        model: str) -> None:
    server = model_env
    shot = png(12, 10, seed=3)
    (workspace / "ui.png").write_bytes(shot)
    b64 = base64.b64encode(shot).decode()
    api, name = model.split(":")
    stream = AnthropicStream if api == "anthropic" else OpenAIStream
    call = Call("call_img_1", "read_file", fragments({"path": "ui.png"}, 5))
    server.queue(Reply(chunks=stream(model=name, text=["Let me look."], calls=[call]).events()),
                 Reply(chunks=stream(model=name, text=["A button."]).events()))

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")  # type: ignore[untyped-decorator]
        def _permission(params: Any) -> dict[str, Any]:
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(setup=setup)
    result = await client.call("openprogram/chat", {"text": "what is in ui.png?",
                                                    "model": model})
    assert result["status"] == "done", result
    sent = server.received[1].json["messages"]
    if api == "anthropic":
        [res] = [b for m in sent if m["role"] == "user" for b in m["content"]
                 if b["type"] == "tool_result"]
        assert res["content"][1] == {"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": b64}}
        assert "PNG image, 12x10 pixels" in res["content"][0]["text"]
    elif name == "gpt-4o":
        at = next(i for i, m in enumerate(sent) if m["role"] == "tool")
        assert "attached as an image" in sent[at]["content"]
        follow = sent[at + 1]
        assert follow["role"] == "user" and follow["content"][1] == {
            "type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}
        assert "read_file" in follow["content"][0]["text"]
    else:  # a model that does not see is told, in text, that it is not shown
        assert b64 not in server.received[1].body.decode()
        assert "not shown: this model does not take images" in json.dumps(sent)
    # the next turn's history still carries it (the reply node keeps the image record)
    server.queue(Reply(chunks=stream(model=name, text=["Still a button."]).events()))
    again = await client.call("openprogram/chat", {"text": "and again?",
                                                   "sessionId": result["sessionId"],
                                                   "model": model})
    assert again["status"] == "done", again
    assert (b64 in server.received[2].body.decode()) == (name != "gpt-test")


async def test_copies_a_request_needs_are_made_off_the_event_loop(
        server: LoopbackServer, settings: HttpSettings, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = ImageBlobs(tmp_path / "images")
    wide = blobs.put(png(2400, 30, seed=5, noise=True), "wide.png")
    small = [blobs.put(png(4, 4, seed=40 + i, noise=True)) for i in range(20)]
    threads: list[int] = []
    real = images.downscale

    def downscale(*args: Any, **kw: Any) -> Any:
        threads.append(threading.get_ident())
        return real(*args, **kw)

    monkeypatch.setattr(images, "downscale", downscale)
    server.queue(*(Reply(chunks=AnthropicStream(text=["ok"]).events()) for _ in range(2)))
    p = AnthropicProvider("claude-test", base_url=server.url, api_key="k", settings=settings)
    req = ModelRequest(system="", tools=[], messages=[
        Message(role="user", content="look", images=[wide, *small])])  # 21: 2000 a side
    for _ in range(2):
        async for _ev in p.stream(req):
            pass
    assert threads and threading.get_ident() not in threads  # made once, in a thread
    assert len(threads) == 1
    first = server.received[0].json["messages"][0]["content"][0]
    with Image.open(io.BytesIO(base64.b64decode(first["source"]["data"]))) as im:
        assert im.size == (2000, 25)
    assert server.received[1].body == server.received[0].body  # the same bytes every call
