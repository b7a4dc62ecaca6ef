"""Issue 34 item 3 at 256 in flight: an async whole-answer call posted straight on the aiohttp session holds no
closure cells in the frames it keeps while in flight (llmplex-openai's ``apost``, llmplex-anthropic's ``asend``,
llmplex-azure's ``_apost``, ``DirectSender.post``): what builds the httpx request on a failure, and a ``Reply``'s
httpx response, are partials. Each cell was one more object for the collector to walk on every pass, for every
call in flight."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmplex_anthropic.lean import LeanMessages
from llmplex_azure import transport as azure_transport
from llmplex_openai.lean import apost

from llmplex.http.direct import DirectSender


@pytest.mark.parametrize(
    "held",
    [apost, LeanMessages.asend, azure_transport._apost, DirectSender.post],
    ids=["openai apost", "anthropic asend", "azure apost", "sender post"],
)
def test_item_3_direct_no_cells_in_an_in_flight_frame(held: Callable[..., Any]) -> None:
    code = held.__code__
    assert code.co_cellvars == () and code.co_freevars == ()
