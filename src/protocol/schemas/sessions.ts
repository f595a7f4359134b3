/** Conversation sessions: create, read, delete. */
import { Type, type Static } from '@sinclair/typebox';
import { ModelId, ProviderId, Uuid } from './common.js';
import { HistoryMessage, SessionInfo } from './interactive.js';
import { open, strict } from './shape.js';

export const SessionCreate = Type.Object(
  {
    provider: ProviderId,
    model: ModelId,
    mode: Type.Union([Type.Literal('history'), Type.Literal('native')]),
    history: Type.Optional(Type.Array(Type.Ref(HistoryMessage), { maxItems: 100 })),
    instructions: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { ...strict, $id: 'SessionCreate' },
);

export const SessionIdentity = Type.Object({ id: Uuid }, { ...strict, $id: 'SessionIdentity' });

export const SessionSnapshot = Type.Object(
  {
    session: Type.Ref(SessionInfo),
    history: Type.Array(Type.Ref(HistoryMessage), { maxItems: 100 }),
    instructions: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { ...open, $id: 'SessionSnapshot' },
);

export const SessionDeleteResult = Type.Object({ id: Uuid, deleted: Type.Boolean() }, { ...open, $id: 'SessionDeleteResult' });

/** The caller's subject's sessions, most recently used first. */
export const SessionListRequest = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, { ...strict, $id: 'SessionListRequest' });

export const SessionList = Type.Object({ sessions: Type.Array(Type.Ref(SessionInfo), { maxItems: 100 }) }, { ...open, $id: 'SessionList' });

export type SessionCreate = Static<typeof SessionCreate>;
export type SessionIdentity = Static<typeof SessionIdentity>;
export type SessionSnapshot = Static<typeof SessionSnapshot>;
export type SessionDeleteResult = Static<typeof SessionDeleteResult>;
export type SessionListRequest = Static<typeof SessionListRequest>;
export type SessionList = Static<typeof SessionList>;
