"""Python client for AgenticDriver wire protocol 1.0.

``AgenticClient`` is synchronous and uses only the standard library;
``AsyncAgenticClient`` runs on asyncio and needs the ``agenticdriver[async]`` extra.
"""
from ._async import AsyncAgenticClient, AsyncRunStream
from ._citations import check_citations
from ._endpoint import PROTOCOL_VERSION
from ._operator import AsyncOperatorClient, OperatorClient
from ._sync import AgenticClient, RunStream
from ._tickets import (
    AsyncPendingApproval,
    AsyncPendingExecution,
    AsyncToolContext,
    AsyncToolFunction,
    AsyncToolFunctions,
    PendingApproval,
    PendingExecution,
    ToolContext,
    ToolFunction,
    ToolFunctions,
)
from .errors import DriverError
from .generated import codes

__all__ = [
    "PROTOCOL_VERSION",
    "AgenticClient",
    "AsyncAgenticClient",
    "AsyncPendingApproval",
    "AsyncPendingExecution",
    "AsyncOperatorClient",
    "AsyncRunStream",
    "AsyncToolContext",
    "AsyncToolFunction",
    "AsyncToolFunctions",
    "DriverError",
    "OperatorClient",
    "PendingApproval",
    "PendingExecution",
    "RunStream",
    "ToolContext",
    "ToolFunction",
    "ToolFunctions",
    "check_citations",
    "codes",
]
__version__ = "0.1.0"
