/** The `a2a` section of the host config: present, the host is an A2A agent (`/.well-known/agent-card.json`, `POST /a2a`). */
import { Type, type Static } from '@sinclair/typebox';
import { ModelId, ProviderId } from '../../protocol/schemas.js';

export const A2aConfig = Type.Object(
  {
    /** The agent card's name and description. */
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    /** The provider and model of a task whose message's metadata names none. */
    provider: Type.Optional(ProviderId),
    model: Type.Optional(ModelId),
  },
  { additionalProperties: false },
);
export type A2aConfig = Static<typeof A2aConfig>;
