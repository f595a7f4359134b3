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
    /**
     * Present, the agent takes push-notification configs (its card says `pushNotifications: true`)
     * and POSTs a task to its config's URL when it ends or needs input.
     */
    pushNotifications: Type.Optional(
      Type.Object(
        {
          /**
           * The receivers a config may name, as URL prefixes (scheme, host, port and a path prefix):
           * a push URL must start with one of them. Absent: any receiver the URL rule allows.
           */
          allowedUrls: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: 100 })),
          /** A PEM file of extra CAs to trust for receivers on a private PKI (besides the system roots); relative to the config file. */
          caFile: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
          /** Attempts per notification before it is given up (default 10; backoff 0.5 s doubling to 60 s). */
          maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
          /** One attempt's bound (default 5 s). */
          timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type A2aConfig = Static<typeof A2aConfig>;
