/** Shapes runs share with the interactive extensions: session history and binding, interactive approvals, application-tool executions. */
import { Type, type Static } from '@sinclair/typebox';
import { HostTimestamp, ModelId, ProviderId, Timestamp, ToolCall, ToolName, Uuid } from './common.js';
import { JsonObject, open, strict } from './shape.js';

export const HistoryMessage = Type.Object(
  { role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), content: Type.String({ maxLength: 100_000 }) },
  { ...strict, $id: 'HistoryMessage' },
);

export const SessionBinding = Type.Object(
  { id: Type.String({ pattern: '^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$' }), revision: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) },
  strict,
);

export const SessionInfo = Type.Object(
  {
    id: Uuid,
    revision: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    provider: ProviderId,
    model: ModelId,
    mode: Type.Union([Type.Literal('history'), Type.Literal('native')]),
    state: Type.Union([Type.Literal('ready'), Type.Literal('running'), Type.Literal('interrupted')]),
    createdAt: HostTimestamp,
    updatedAt: HostTimestamp,
    expiresAt: Type.Optional(HostTimestamp),
  },
  { ...open, $id: 'SessionInfo' },
);

export const ApprovalOptions = Type.Object(
  {
    mode: Type.Literal('interactive'),
    idlePolicy: Type.Union([Type.Literal('pause'), Type.Literal('continue')]),
    expiresAfterMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  },
  strict,
);

export const ApplicationToolDefinition = Type.Object(
  {
    name: ToolName,
    description: Type.String({ minLength: 1, maxLength: 10_000 }),
    inputSchema: JsonObject,
    outputSchema: Type.Optional(JsonObject),
    requiresApproval: Type.Optional(Type.Boolean()),
  },
  { ...strict, $id: 'ApplicationToolDefinition' },
);

export const ApprovalRequest = Type.Object(
  {
    approvalId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    call: Type.Ref(ToolCall),
    requestedAt: Timestamp,
    expiresAt: Type.Optional(Timestamp),
    idlePolicy: Type.Union([Type.Literal('pause'), Type.Literal('continue')]),
  },
  { ...open, $id: 'ApprovalRequest' },
);

export const ApprovalResolution = Type.Object(
  {
    approvalId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    callId: Type.String({ minLength: 1, maxLength: 256 }),
    outcome: Type.Union([Type.Literal('approved'), Type.Literal('denied'), Type.Literal('cancelled'), Type.Literal('expired')]),
    decidedAt: Timestamp,
  },
  { ...open, $id: 'ApprovalResolution' },
);

export const ToolExecution = Type.Object(
  {
    executionId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    call: Type.Ref(ToolCall),
  },
  { ...open, $id: 'ToolExecution' },
);

/** `POST /v1/approvals/decisions`: echoes the exact run and call being decided. */
export const ApprovalDecision = Type.Object(
  {
    approvalId: Type.String({ minLength: 1, maxLength: 256 }),
    runId: Type.String({ minLength: 1, maxLength: 256 }),
    call: Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }), name: ToolName, arguments: JsonObject }, strict),
    decision: Type.Union([Type.Literal('approve'), Type.Literal('deny'), Type.Literal('cancel')]),
  },
  { ...strict, $id: 'ApprovalDecision' },
);

const toolExecutionIdentity = {
  executionId: Type.String({ minLength: 1, maxLength: 256 }),
  runId: Type.String({ minLength: 1, maxLength: 256 }),
  callId: Type.String({ minLength: 1, maxLength: 256 }),
};

/** `POST /v1/tool-executions/progress`. */
export const ToolExecutionIdentity = Type.Object(toolExecutionIdentity, { ...strict, $id: 'ToolExecutionIdentity' });

/** `POST /v1/tool-executions/results`: exactly one of `output` or `error`. */
export const ToolExecutionResult = Type.Union(
  [
    Type.Object({ ...toolExecutionIdentity, output: Type.Unknown() }, { ...strict, required: ['executionId', 'runId', 'callId', 'output'] }),
    Type.Object({ ...toolExecutionIdentity, error: Type.Literal('APPLICATION_TOOL_FAILED') }, strict),
  ],
  { $id: 'ToolExecutionResult' },
);

export const ToolExecutionReceipt = Type.Object(
  { ...toolExecutionIdentity, status: Type.Union([Type.Literal('progress'), Type.Literal('accepted')]) },
  { ...open, $id: 'ToolExecutionReceipt' },
);

export type HistoryMessage = Static<typeof HistoryMessage>;
export type SessionInfo = Static<typeof SessionInfo>;
export type ApplicationToolDefinition = Static<typeof ApplicationToolDefinition>;
export type ApprovalRequest = Static<typeof ApprovalRequest>;
export type ApprovalResolution = Static<typeof ApprovalResolution>;
export type ToolExecution = Static<typeof ToolExecution>;
export type ApprovalDecision = Static<typeof ApprovalDecision>;
export type ToolExecutionIdentity = Static<typeof ToolExecutionIdentity>;
export type ToolExecutionResult = Static<typeof ToolExecutionResult>;
export type ToolExecutionReceipt = Static<typeof ToolExecutionReceipt>;
