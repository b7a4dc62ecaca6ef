"""ConverseStream's request without botocore's per-call pipeline: boto3's exact request, signed per call.

``client.converse_stream(**payload)`` runs about twenty event handlers, the
endpoint ruleset, the retry machinery and the response parser's setup on every
call. For a client this plugin built (``clients.create_client``) whose event
handlers are still botocore's defaults, ``lean_request(client)`` gives a
``LeanRequest`` prepared once: the operation model, the endpoint the ruleset
resolves (Bedrock's rules read only the region, FIPS, dual-stack and
``endpoint_url``, never the call's parameters), the signing name and region,
and the signer botocore would choose. Each call then runs what the pipeline
would run on the same objects, in its order: the client's own validating
REST-JSON serializer (compiled once from the operation's shapes,
``llmplex_bedrock.serialize``), ``prepare_request_dict`` with the endpoint and
the User-Agent (the URL joined once per path, the User-Agent string built once
per client and set of features), the Lambda recursion-detection header, the request signed
by botocore's ``SigV4Auth`` with the credentials frozen now (as
``signing.LeanSigV4Auth``: the signing key and canonical paths kept between
calls), the User-Agent rebuilt as botocore rebuilds it after signing,
``amz-sdk-invocation-id`` (a uuid4) and ``amz-sdk-request``
(``attempt=1; max=1``), the headers encoded as the endpoint encodes them and
the ``Content-Length`` ``AWSRequest.prepare`` adds to a POST: the bytes and
headers boto3 would hand the transport (``build``; ``sign`` gives the same
headers before they are encoded, to a sender that encodes them itself, as
``HttpxSender.post`` does). The headers are held in a plain
``dict`` throughout (botocore's ``HTTPHeaders`` is an ``email`` message, slow
to write; its prepared ``HeadersDict`` is slow to read): ConverseStream has no
header parameters and Bedrock's endpoint none, so no two header names differ
only in case.

An error status before the stream is parsed by botocore's parser as its
endpoint parses it (with the modelled error fields) and raised as the
client's modelled ``ClientError`` subclass with the same response dict.
Whatever this cannot reproduce is left to boto3 (``lean_request`` or
``LeanRequest.usable`` say ``None``/``False``): a client built elsewhere, a
handler a user registered or unregistered, another signer (a bearer token),
retries other than one attempt, an operation needing host prefixes, checksums,
idempotency tokens or headers from its parameters or endpoint, credentials missing or due for a refresh, a bearer
token in the environment (``AWS_BEARER_TOKEN_BEDROCK``: boto3 then signs
with it).
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import botocore.useragent
import botocore.utils
from botocore.awsrequest import AWSPreparedRequest, AWSResponse, prepare_request_dict
from botocore.context import get_context, start_as_current_context
from botocore.endpoint import convert_to_response_dict
from botocore.handlers import add_recursion_detection_header

from llmplex_bedrock.lean import EventDecoder, stream_decoder
from llmplex_bedrock.serialize import RequestSerializer
from llmplex_bedrock.signing import LeanSigV4Auth, SigningCache

__all__ = ["OPERATION", "LeanRequest", "lean_request", "raise_for_status"]

OPERATION = "ConverseStream"

_DEFAULT_HANDLERS: Mapping[str, tuple[str, ...]] = {
    "provide-client-params": (),
    "before-parameter-build": ("generate_idempotent_uuid", "_handle_request_validation_mode_member"),
    "before-endpoint-resolution": (),
    "before-call": ("add_recursion_detection_header", "inject_api_version_header_if_needed"),
    "request-created": (
        "RequestSigner.handler",
        "MaxAttemptsSeeder.seed_max_attempts",
        "UserAgentString.rebuild_and_replace_user_agent_handler",
        "add_retry_headers",
    ),
    "before-sign": (),
    "before-send": ("HttpxSender",),
    "before-parse": (),
    "needs-retry": ("RetryHandler.needs_retry",),
    "after-call": ("RetryQuotaChecker.release_retry_quota",),
    "after-call-error": (),
    "choose-signer": ("set_operation_specific_signer", "_set_auth_scheme_preference_signer"),
}
"""The handlers botocore registers on a ``bedrock-runtime`` client for ConverseStream (and llmplex's sender): what
the lean request does in their place. Any other set (a user's hook, another botocore) leaves the call to boto3."""

_AGENTS = 16
"""User-Agent strings kept per client (one per set of features a call registered): beyond, they start again."""

_URLS = 256
"""URLs kept per client (one per model id sent): beyond, they start again."""

_RETRY_HEADER = "attempt=1; max=1"
"""``amz-sdk-request`` of the only attempt (retries are core's: ``total_max_attempts=1``)."""


def _name(handler: Any) -> str:
    target = getattr(handler, "__func__", handler)
    return str(getattr(target, "__qualname__", None) or type(target).__qualname__)


def _handlers(emitter: Any, event: str) -> tuple[str, ...]:
    inner = getattr(emitter, "_emitter", None)
    if inner is None or not hasattr(inner, "_handlers"):
        raise LookupError("not botocore's event emitter")
    name = emitter._alias_event_name(f"{event}.bedrock-runtime.{OPERATION}")
    return tuple(_name(handler) for handler in inner._handlers.prefix_search(name))


@dataclass(frozen=True)
class LeanRequest:
    """ConverseStream of one boto3 client, prepared once (see the module's docstring)."""

    client: Any
    operation: Any
    endpoint_url: str
    context: Mapping[str, Any]
    """The request context each call starts from (``_make_api_call``'s, the endpoint's properties, the signing)."""
    signing_name: str
    region: str
    lookups: dict[str, Any]
    """The emitter's lookup cache when prepared: botocore replaces it whenever a handler is (un)registered."""
    stream_shape: Any
    stream_parser: Any
    decoder: EventDecoder
    """The lean reader's decoder of ``stream_parser``'s events (``llmplex_bedrock.lean``)."""
    signing_cache: SigningCache
    serialize: RequestSerializer
    """The client's serializer for the operation, compiled (``llmplex_bedrock.serialize``)."""
    urls: dict[str, str] = field(default_factory=dict)
    """URLs by path (``url_of``)."""
    agents: dict[tuple[Any, ...], str] = field(default_factory=dict)
    """User-Agent strings by creator, client features and the call's features (``user_agent``)."""

    def usable(self) -> bool:
        """Whether the lean request is still boto3's: no handler (un)registered since, credentials fresh."""
        client = self.client
        if client.meta.events._emitter._lookup_cache is not self.lookups:
            return False
        credentials = client._request_signer._credentials
        if credentials is None or _bearer_token(self.signing_name) is not None:  # bearer auth: boto3's
            return False
        refresh_needed: Callable[[], bool] | None = getattr(credentials, "refresh_needed", None)
        return refresh_needed is None or not refresh_needed()

    def build(self, params: Mapping[str, Any]) -> AWSPreparedRequest:
        """The signed request ``converse_stream(**params)`` would send now (``ParamValidationError`` as boto3's)."""
        method, url, headers, body = self.sign(params)
        length = headers.pop("Content-Length")
        sent = {  # the endpoint's _encode_headers
            key: value.encode("utf-8") if isinstance(value, str) else value for key, value in headers.items()
        }
        sent["Content-Length"] = length
        return AWSPreparedRequest(method, url, cast(Any, sent), body, True)

    def sign(self, params: Mapping[str, Any]) -> tuple[str, str, dict[str, Any], bytes | None]:
        """``build``'s method, URL, headers and body, the headers as botocore holds them before it encodes them
        (text; the ``Content-Length`` last), for a sender that encodes them itself."""
        client = self.client
        with start_as_current_context():
            request_dict = self.serialize(params)
            if not client._client_config.inject_host_prefix:
                request_dict.pop("host_prefix", None)
            invocation = str(uuid.uuid4())
            context = {**self.context, "retries": {"attempt": 1, "invocation-id": invocation, "max": 1}}
            user_agent = client._user_agent_creator
            agent = self.user_agent(user_agent)
            if request_dict["query_string"] or request_dict.get("host_prefix"):
                prepare_request_dict(request_dict, self.endpoint_url, context=context, user_agent=agent)
                url = request_dict["url"]
            else:  # what prepare_request_dict does, the URL joined once per path
                request_dict["headers"]["User-Agent"] = agent
                url = self.url_of(request_dict["url_path"])
            add_recursion_detection_header(request_dict)
            method, body = request_dict["method"], request_dict["body"] or None
            headers: dict[str, Any] = request_dict["headers"]
            request: Any = _Signed(method, url, headers, body, context)
            features = _features()
            credentials = client._request_signer._credentials.get_frozen_credentials()
            LeanSigV4Auth(credentials, self.signing_name, self.region, self.signing_cache).add_auth(request)
            if headers.get("User-Agent") and _features() != features:  # rebuilt as botocore rebuilds it after
                headers["User-Agent"] = self.user_agent(user_agent)  # signing: the features registered since added
            headers["amz-sdk-invocation-id"] = invocation
            headers["amz-sdk-request"] = _RETRY_HEADER
            headers["Content-Length"] = str(botocore.utils.determine_content_length(body))  # as AWSRequest.prepare
            return method, url, headers, body

    def url_of(self, path: str) -> str:
        """The URL ``prepare_request_dict`` joins from the endpoint and ``path`` (no query, no host prefix), joined
        once per path."""
        urls = self.urls
        url = urls.get(path)
        if url is None:
            joined: dict[str, Any] = {"url_path": path, "query_string": "", "headers": {}}
            prepare_request_dict(joined, self.endpoint_url)
            if len(urls) >= _URLS:
                urls.clear()
            url = urls[path] = joined["url"]
        return url

    def user_agent(self, creator: Any) -> str:
        """``creator.to_string()``, built once per client and set of features (its other parts are the client's,
        fixed when it was built); a ``modify_components`` of the user's own is called every time."""
        context = get_context()
        features = () if context is None else tuple(context.features)
        modify = getattr(botocore.useragent, "modify_components", None)
        if getattr(modify, "__module__", None) != "botocore.useragent":
            return str(creator.to_string())
        key = (creator, tuple(creator._client_features or ()), features)
        agents = self.agents
        agent = agents.get(key)
        if agent is None:
            if len(agents) >= _AGENTS:
                agents.clear()
            agent = agents[key] = str(creator.to_string())
        return agent

    def events_of(self, raw: Any) -> Any:
        """botocore's ``EventStream`` over ``raw`` (a body with ``stream()``), as the parser would build it."""
        from botocore.eventstream import EventStream

        return EventStream(raw, self.stream_shape, self.stream_parser, OPERATION)


@dataclass(slots=True)
class _Signed:
    """What ``SigV4Auth`` reads and writes of an ``AWSRequest``: its ``body`` the serialized bytes as
    ``AWSRequest.prepare`` gives them, its headers a ``dict`` (see the module's docstring)."""

    method: str
    url: str
    headers: dict[str, Any]
    body: bytes | None
    context: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)


def raise_for_status(client: Any, operation: Any, response: AWSResponse) -> None:
    """Raise the error boto3 raises for an answer of status 300 or more (its body read here); else nothing."""
    if response.status_code < 300:
        return
    response_dict = convert_to_response_dict(response, operation)
    parser = client._endpoint._response_parser_factory.create_parser(operation.service_model.resolved_protocol)
    parsed = parser.parse(response_dict, operation.output_shape)
    client._endpoint._add_modeled_error_fields(response_dict, parsed, operation, parser)
    client.meta.events.emit(  # the retry handler: one attempt, so none, but it marks the metadata as boto3's
        f"needs-retry.bedrock-runtime.{OPERATION}",
        response=(response, parsed),
        endpoint=client._endpoint,
        operation=operation,
        attempts=1,
        caught_exception=None,
        request_dict={"context": {"retries": {"attempt": 1, "max": 1}}},
    )
    parsed["ResponseMetadata"]["RetryAttempts"] = 0
    code = parsed.get("Error", {}).get("Code")
    raise client.exceptions.from_code(code)(parsed, OPERATION)


_PREPARED: weakref.WeakKeyDictionary[Any, LeanRequest | None] = weakref.WeakKeyDictionary()


def lean_request(client: Any) -> LeanRequest | None:
    """The lean ConverseStream of ``client`` when it sends what boto3 would send now, else ``None``."""
    try:
        prepared = _PREPARED[client]
    except KeyError:
        prepared = _PREPARED[client] = _prepare(client)
    except TypeError:  # not weakly referenceable: not a boto3 client
        return None
    return prepared if prepared is not None and prepared.usable() else None


def _bearer_token(signing_name: str) -> Any:
    """The bearer token boto3 would sign with instead (botocore 1.39 and later read it on every call)."""
    lookup = getattr(botocore.utils, "get_token_from_environment", None)
    return None if lookup is None else lookup(signing_name)


def _request_context(client: Any, operation: Any) -> dict[str, Any]:
    """The request context ``BaseClient._make_api_call`` starts each call with."""
    meta = client.meta
    return {
        "client_region": meta.region_name,
        "client_config": meta.config,
        "has_streaming_input": operation.has_streaming_input,
        "auth_type": operation.resolved_auth_type,
        "unsigned_payload": operation.unsigned_payload,
        "auth_options": meta.service_model.metadata.get("auth"),
    }


def _prepare(client: Any) -> LeanRequest | None:
    try:
        return _prepared(client)
    except (AttributeError, LookupError, TypeError, ValueError):  # not a client as this botocore builds them
        return None


def _prepared(client: Any) -> LeanRequest | None:
    meta = client.meta
    if meta.service_model.service_name != "bedrock-runtime" or meta.service_model.resolved_protocol != "rest-json":
        return None
    emitter = meta.events
    if any(_handlers(emitter, event) != expected for event, expected in _DEFAULT_HANDLERS.items()):
        return None
    config = meta.config
    if (
        config.retries.get("total_max_attempts") != 1
        or getattr(config, "auth_scheme_preference", None)
        or config.signature_version not in (None, "v4")
    ):
        return None
    operation = meta.service_model.operation_model(OPERATION)
    if (
        getattr(operation, "auth", None)
        or operation.resolved_auth_type
        or operation.http_checksum
        or operation.http_checksum_required
        or operation.request_compression
        or operation.idempotent_members
        or (operation.endpoint or {}).get("hostPrefix")
        or operation.context_parameters
        or operation.static_context_parameters
        or operation.is_endpoint_discovery_operation
    ):
        return None
    signer = client._request_signer
    context = _request_context(client, operation)
    url, headers, properties = client._resolve_endpoint_ruleset(operation, {}, context)
    if signer._choose_signer(OPERATION, "standard", context) != "v4" or context.get("auth_type") not in (None, "v4"):
        return None
    signing = context.get("signing", {})
    if set(signing) - {"region", "signing_name", "disableDoubleEncoding"} or headers:
        return None
    if any(member.serialization.get("location") in ("header", "headers") for member in _members(operation)):
        return None  # the request's headers are then the serializer's and botocore's only, no two names alike
    shape = operation.output_shape.members["stream"]
    parser = client._response_parser._event_stream_parser
    decoder = stream_decoder(parser, shape, OPERATION)
    if decoder is None:
        return None
    return LeanRequest(
        client=client,
        operation=operation,
        endpoint_url=url,
        context={**_request_context(client, operation), "endpoint_properties": properties, "signing": signing},
        signing_name=signing.get("signing_name") or signer._signing_name,
        region=signing.get("region") or signer._region_name,
        lookups=emitter._emitter._lookup_cache,
        stream_shape=shape,
        stream_parser=parser,
        decoder=decoder,
        signing_cache=SigningCache(),
        serialize=RequestSerializer(client._serializer, operation),
    )


def _features() -> int:
    """How many user-agent features the call's context holds (a set only ever added to): the string botocore
    builds from them is the same while this is."""
    context = get_context()
    return 0 if context is None else len(context.features)


def _members(operation: Any) -> Any:
    shape = operation.input_shape
    return () if shape is None else shape.members.values()
