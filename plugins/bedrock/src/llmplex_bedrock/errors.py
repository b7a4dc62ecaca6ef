"""botocore exceptions → the llmplex error taxonomy.

Bedrock names its errors (``x-amzn-ErrorType``): the name decides where the
HTTP status alone would mislead (a ``ModelErrorException`` is a 424 worth
retrying, a ``ServiceQuotaExceededException`` a 400 that no retry cures).
"""

from __future__ import annotations

from typing import Any

from botocore import exceptions as boto_errors
from botocore.eventstream import ParserError as EventStreamParserError
from botocore.parsers import ResponseParserError

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from llmplex.http import error_for_status

__all__ = ["CODE_CLASSES", "classify_error"]

CODE_CLASSES: dict[str, type[LLMAPIError]] = {
    "ThrottlingException": LLMRateLimitError,
    "ServiceQuotaExceededException": LLMQuotaExhaustedError,
    "ModelNotReadyException": LLMServerError,
    "ModelTimeoutException": LLMServerError,
    "ModelErrorException": LLMServerError,
    "ModelStreamErrorException": LLMServerError,
    "InternalServerException": LLMServerError,
    "ServiceUnavailableException": LLMServerError,
    "ValidationException": LLMBadRequestError,
    "ResourceNotFoundException": LLMBadRequestError,
    "ConflictException": LLMBadRequestError,
    "AccessDeniedException": LLMAuthenticationError,
    "UnrecognizedClientException": LLMAuthenticationError,
    "ExpiredTokenException": LLMAuthenticationError,
    "InvalidSignatureException": LLMAuthenticationError,
    "IncompleteSignature": LLMAuthenticationError,
}
"""Bedrock's documented error names (Converse, ConverseStream, and AWS's common errors) → taxonomy classes."""

_KEY_HINT = "check the AWS credentials (the credential chain, or aws_access_key_id/aws_secret_access_key) and region"
_CONFIGURATION_ERRORS = (
    boto_errors.NoCredentialsError,
    boto_errors.PartialCredentialsError,
    boto_errors.NoRegionError,
    boto_errors.ProfileNotFound,
    boto_errors.ParamValidationError,
)


def _stream_status(code: str) -> int:
    """An exception event inside a stream has no HTTP status of its own: the one its error documents."""
    cls = CODE_CLASSES.get(code)
    if cls is LLMRateLimitError:
        return 429
    if cls is LLMServerError:
        return 500
    return 400


def _client_error(error: boto_errors.ClientError) -> LLMAPIError:
    response: dict[str, Any] = getattr(error, "response", None) or {}
    details = response.get("Error") or {}
    metadata = response.get("ResponseMetadata") or {}
    code = str(details.get("Code") or "")
    code = code[:1].upper() + code[1:]  # an exception event names it in camel case: throttlingException
    status = metadata.get("HTTPStatusCode")
    if not isinstance(status, int) or status < 400:
        status = _stream_status(code)
    body = {"message": str(details.get("Message") or ""), "code": code}
    return error_for_status(
        status,
        dict(metadata.get("HTTPHeaders") or {}),
        body,
        key_hint=_KEY_HINT,
        override=lambda _status, _body: CODE_CLASSES.get(code),
        request_id=metadata.get("RequestId"),
        cause=error,
    )


def classify_error(error: BaseException) -> LLMError | None:
    """The taxonomy error for a botocore exception; ``None`` for anything else."""
    if isinstance(error, boto_errors.ClientError):
        return _client_error(error)
    if isinstance(error, (boto_errors.ReadTimeoutError, boto_errors.ConnectTimeoutError)):
        return LLMTimeoutError("the Bedrock request timed out", cause=error)
    if isinstance(error, (boto_errors.EndpointConnectionError, boto_errors.ConnectionClosedError)):
        return LLMConnectionError("could not reach Bedrock (connection refused, reset or closed)", cause=error)
    if isinstance(error, boto_errors.HTTPClientError):
        return LLMConnectionError(f"the connection to Bedrock failed: {type(error).__name__}", cause=error)
    if isinstance(error, _CONFIGURATION_ERRORS):
        return LLMConfigurationError(f"Bedrock is not configured: {error}; {_KEY_HINT}", cause=error)
    if isinstance(error, ResponseParserError):
        return LLMServerError("Bedrock answered with a body that could not be read", cause=error)
    if isinstance(error, EventStreamParserError):  # a frame failing its CRC, or announcing an oversized part
        return LLMServerError(f"Bedrock's event stream could not be read: {type(error).__name__}", cause=error)
    return None
