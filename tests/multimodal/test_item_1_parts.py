"""Issue 16 item 1: the Image, Document and Audio parts — built from paths, bytes and URLs, checked, refused.

Every refusal is an ``LLMConfigurationError`` whose message says what was wrong.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

import llmplex
from llmplex import Audio, Document, Image, LLMConfigurationError, Message
from llmplex.reliability.estimate import BYTES_PER_PART_TOKEN, IMAGE_TOKENS, estimate_input_tokens
from llmplex.testing import media
from llmplex.types import MAX_PART_BYTES, Request
from llmplex.types.parts import part_from_path

SAMPLES = [
    (Image, "cat.png", media.PNG, "image/png"),
    (Image, "cat.jpg", media.JPEG, "image/jpeg"),
    (Image, "cat.jpeg", media.JPEG, "image/jpeg"),
    (Image, "cat.gif", media.GIF, "image/gif"),
    (Image, "cat.webp", media.WEBP, "image/webp"),
    (Document, "report.pdf", media.PDF, "application/pdf"),
    (Audio, "question.wav", media.WAV, "audio/wav"),
    (Audio, "question.mp3", media.MP3, "audio/mpeg"),
]
IDS = [name for _, name, _, _ in SAMPLES]


@pytest.mark.parametrize(("part_class", "name", "data", "media_type"), SAMPLES, ids=IDS)
def test_item_1_from_path_reads_the_file_and_tells_its_type(
    tmp_path: Path, part_class: type[Image], name: str, data: bytes, media_type: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    part = part_class.from_path(path)
    assert (part.data, part.url, part.media_type) == (data, None, media_type)
    assert part_from_path(str(path)) == part


@pytest.mark.parametrize(("part_class", "name", "data", "media_type"), SAMPLES, ids=IDS)
def test_item_1_from_bytes_sniffs_or_checks_the_media_type(
    part_class: type[Image], name: str, data: bytes, media_type: str
) -> None:
    assert part_class.from_bytes(data).media_type == media_type
    assert part_class.from_bytes(bytearray(data), media_type).data == data


def test_item_1_a_document_from_path_keeps_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "q3 report.pdf").write_bytes(media.PDF)
    assert Document.from_path(tmp_path / "q3 report.pdf").filename == "q3 report.pdf"
    assert Document.from_bytes(media.PDF).filename == "document.pdf"
    assert Document.from_bytes(media.PDF, name="a.pdf").filename == "a.pdf"
    assert Document.from_url("https://example.com/files/b.pdf").filename == "b.pdf"


def test_item_1_media_type_aliases_are_normalized() -> None:
    assert Image.from_bytes(media.JPEG, "IMAGE/JPG").media_type == "image/jpeg"
    assert Audio.from_bytes(media.MP3, "audio/mp3").media_type == "audio/mpeg"
    assert Audio.from_bytes(media.WAV, "audio/x-wav; codecs=1").media_type == "audio/wav"


def test_item_1_from_url_takes_the_type_from_the_suffix_or_media_type() -> None:
    assert Image.from_url("https://example.com/a/cat.JPG?size=large").media_type == "image/jpeg"
    assert Image.from_url("https://example.com/render?id=3", media_type="image/webp").media_type == "image/webp"
    assert Document.from_url("https://example.com/download?id=7").media_type == "application/pdf"
    with pytest.raises(LLMConfigurationError, match=r"cannot tell the media type.*give media_type="):
        Image.from_url("https://example.com/render?id=3")


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://example.com/a.png", "data:image/png;base64,AAAA", "https:///a.png", "cat.png"],
)
def test_item_1_only_http_urls_are_taken(url: str) -> None:
    with pytest.raises(LLMConfigurationError, match=r"not an http\(s\) URL.*from_path / from_bytes"):
        Image.from_url(url)


def test_item_1_audio_has_no_url_constructor() -> None:
    assert not hasattr(Audio, "from_url")
    with pytest.raises(LLMConfigurationError, match="not an http"):
        Audio(url="file:///x.wav", media_type="audio/wav")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Image.from_bytes(b"hello there"), r"the bytes are none of image/png"),
        (lambda: Image.from_bytes(media.JPEG, "image/png"), r"the bytes are image/jpeg, not image/png"),
        (lambda: Image.from_bytes(media.PDF), r"application/pdf is a PDF document, not an image; use llmplex.Document"),
        (lambda: Document.from_bytes(media.PNG), r"image/png is an image, not a PDF document; use llmplex.Image"),
        (lambda: Audio.from_bytes(media.PNG, "audio/ogg"), r"'audio/ogg' is not a media type llmplex sends"),
        (lambda: Image.from_bytes(b""), r"the bytes are none of"),
        (lambda: Image.from_bytes(b"", "image/png"), r"the file is empty"),
        (lambda: Image.from_bytes("not bytes"), r"from_bytes takes bytes, got str"),  # type: ignore[arg-type]
        (lambda: Image(data=media.PNG, url="https://a.example/b.png", media_type="image/png"), r"and not both"),
        (lambda: Image(media_type="image/png"), r"needs either data"),
    ],
)
def test_item_1_unknown_or_mismatched_types_are_refused(build: object, message: str) -> None:
    with pytest.raises(LLMConfigurationError, match=message):
        build()  # type: ignore[operator]


def test_item_1_a_damaged_file_and_a_misnamed_file_are_refused(tmp_path: Path) -> None:
    damaged = tmp_path / "cat.png"
    damaged.write_bytes(b"\x89PNX" + media.PNG[4:])
    with pytest.raises(LLMConfigurationError, match=r"cat.png' is no file type llmplex sends although its name says"):
        Image.from_path(damaged)
    misnamed = tmp_path / "photo.png"
    misnamed.write_bytes(media.JPEG)
    with pytest.raises(LLMConfigurationError, match=r"holds image/jpeg data but its name says image/png; rename"):
        Image.from_path(misnamed)
    unnamed = tmp_path / "photo"
    unnamed.write_bytes(media.JPEG)
    assert Image.from_path(unnamed).media_type == "image/jpeg"


def test_item_1_unreadable_paths_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LLMConfigurationError, match=r"does not exist; check the path"):
        Image.from_path(tmp_path / "missing.png")
    with pytest.raises(LLMConfigurationError, match=r"is a directory"):
        Image.from_path(tmp_path)
    with pytest.raises(LLMConfigurationError, match=r"is not a regular file"):
        Image.from_path("/dev/zero")  # endless bytes: refused before reading
    with pytest.raises(LLMConfigurationError, match=r"cannot be read"):
        Image.from_path("nul\x00byte.png")
    locked = tmp_path / "locked.png"
    locked.write_bytes(media.PNG)
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):  # root reads anything
            return
        with pytest.raises(LLMConfigurationError, match=r"permission denied"):
            Image.from_path(locked)
    finally:
        locked.chmod(0o600)


def test_item_1_oversized_files_and_bytes_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.pdf"
    with big.open("wb") as handle:
        handle.write(media.PDF)
        handle.truncate(MAX_PART_BYTES + 1)  # sparse: no disk used
    with pytest.raises(LLMConfigurationError, match=r"20.0 MiB a part may hold; shrink the file or send it by URL"):
        Document.from_path(big)
    with pytest.raises(LLMConfigurationError, match=r"larger than the 20.0 MiB a part may hold"):
        Document.from_bytes(media.PDF + bytes(MAX_PART_BYTES))
    exactly = media.PDF + bytes(MAX_PART_BYTES - len(media.PDF))
    assert len(Document.from_bytes(exactly).data or b"") == MAX_PART_BYTES


def test_item_1_repr_shows_type_and_size_not_bytes() -> None:
    part = Image.from_bytes(media.PNG)
    assert repr(part) == f"Image(media_type='image/png', size={len(media.PNG)})"
    assert "PNG" not in repr(Message.user(["look", part]))
    assert repr(Image.from_url("https://example.com/c.png")) == (
        "Image(media_type='image/png', url='https://example.com/c.png')"
    )


def test_item_1_parts_are_frozen_values_that_round_trip_through_json() -> None:
    part = Audio.from_bytes(media.WAV)
    with pytest.raises(Exception, match="frozen"):
        part.media_type = "audio/mpeg"  # type: ignore[misc]
    data = part.model_dump(mode="json")
    assert data["type"] == "audio"
    assert base64.urlsafe_b64decode(data["data"]) == media.WAV
    assert Audio.model_validate(data) == part
    assert Audio.model_validate_json(part.model_dump_json()) == part
    standard = {"type": "audio", "data": base64.b64encode(media.WAV).decode()}
    assert Audio.model_validate(standard) == part
    with pytest.raises(LLMConfigurationError, match="given as text is not base64"):
        Audio.model_validate({"type": "audio", "data": "not base64!"})


def test_item_1_message_user_takes_a_list_of_text_and_parts() -> None:
    image, document = Image.from_bytes(media.PNG), Document.from_bytes(media.PDF)
    message = Message.user(["compare", image, "with", document])
    assert message.content == ("compare", image, "with", document)
    assert message.parts == (image, document)
    assert message.text == "compare\n\nwith"
    assert Message.user("plain").pieces == ("plain",)
    as_data = json.loads(message.model_dump_json())
    assert Message.model_validate(as_data) == message


def test_item_1_only_user_messages_carry_parts() -> None:
    image = Image.from_bytes(media.PNG)
    for role in ("system", "assistant", "tool"):
        with pytest.raises(LLMConfigurationError, match=f"a {role} message's content must be text"):
            Message(role=role, content=("x", image))


def test_item_1_a_prompt_list_with_parts_is_one_user_turn() -> None:
    client = llmplex.Client()
    image = Image.from_url("https://example.com/cat.png")
    answer = client.complete("mock:echo", ["What is this?", image])
    assert answer.text == "What is this? [image: image/png at https://example.com/cat.png]"
    (sent,) = client.provider_client("mock").calls[0]["messages"]
    assert sent["role"] == "user"
    assert sent["content"][0] == "What is this?"
    assert sent["content"][1]["url"] == "https://example.com/cat.png"


@pytest.mark.parametrize(
    ("prompt", "error"),
    [
        (["   ", media.PNG], r"not a valid message"),
        (["  ", "IMAGE"], r"the prompt \(text at position 0\) is only whitespace"),
        ([Message.user("hi"), "IMAGE"], r"prompt\[0\] is a Message in a list of text and parts"),
        ([{"role": "user", "content": "hi"}, "IMAGE"], r"prompt\[0\] is a dict in a list of text and parts"),
        ([{"role": "user", "content": []}], r"messages\[0\] \(user\) has no content"),
    ],
)
def test_item_1_bad_prompt_lists_are_refused_before_sending(prompt: list[object], error: str) -> None:
    client = llmplex.Client()
    image = Image.from_bytes(media.PNG)
    with pytest.raises(LLMConfigurationError, match=error):
        client.complete("mock:echo", [image if item == "IMAGE" else item for item in prompt])  # type: ignore[arg-type]
    assert client.provider_client("mock").calls == []


def test_item_1_budget_estimate_counts_parts() -> None:
    image = Image.from_bytes(media.PNG)
    audio = Audio.from_bytes(media.WAV)
    by_url = Document.from_url("https://example.com/a.pdf")
    text_only = estimate_input_tokens(Request(model="m", messages=(Message.user("abcd"),)))
    with_parts = estimate_input_tokens(Request(model="m", messages=(Message.user(["abcd", image, audio, by_url]),)))
    audio_tokens = -(-len(media.WAV) // BYTES_PER_PART_TOKEN)
    assert with_parts == text_only + IMAGE_TOKENS + audio_tokens + IMAGE_TOKENS


def test_item_1_batch_requests_carry_parts_as_json_data() -> None:
    """A JSONL batch line names parts by their JSON data: base64 bytes or a URL."""
    client = llmplex.Client()
    line = {
        "model": "mock:echo",
        "messages": [
            {
                "role": "user",
                "content": [
                    "Compare",
                    {"type": "image", "data": base64.b64encode(media.PNG).decode()},
                    {"type": "document", "url": "https://example.com/a.pdf"},
                ],
            }
        ],
    }
    (result,) = llmplex.batch([json.loads(json.dumps(line))], client=client)
    assert isinstance(result, llmplex.Response)
    size = len(media.PNG)
    assert (
        result.text
        == f"Compare [image: image/png, {size} bytes] [document: application/pdf at https://example.com/a.pdf]"
    )
    (bad,) = llmplex.batch([{**line, "messages": [{"role": "user", "content": [{"type": "image", "data": "%%"}]}]}])
    assert isinstance(bad, LLMConfigurationError)
    assert "not base64" in str(bad)


def test_item_1_credentials_in_a_part_url_are_never_shown() -> None:
    """The URL goes to the provider as given; reprs and messages drop user:password and the query."""
    signed = "https://user:hunter2@bucket.example.com/cat.png?X-Amz-Signature=s3cr3t&X-Amz-Credential=AKIA"
    image = Image.from_url(signed)
    assert image.url == signed
    shown = [repr(image), str(image), image.describe(), repr(Message.user(["x", image]))]
    with pytest.raises(LLMConfigurationError, match="cannot take image parts") as refused:
        llmplex.Client().complete("claude-code:sonnet", ["What is this?", image])
    shown.append(str(refused.value))
    with pytest.raises(LLMConfigurationError) as unknown:
        Image.from_url("https://user:hunter2@example.com/render?token=s3cr3t")
    shown.append(str(unknown.value))
    with pytest.raises(LLMConfigurationError) as not_http:
        Image.from_url("ftp://user:hunter2@example.com/cat.png?token=s3cr3t")
    shown.append(str(not_http.value))
    for text in shown:
        assert "hunter2" not in text
        assert "s3cr3t" not in text
    assert "https://bucket.example.com/cat.png?..." in image.describe()
