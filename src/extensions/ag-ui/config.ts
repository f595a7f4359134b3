/** The `agUi` section of the host config: present, the host serves AG-UI runs at `/ag-ui`. */
import { Type, type Static } from '@sinclair/typebox';
import { ModelId, ProviderId } from '../../protocol/schemas.js';

export const AgUiConfig = Type.Object(
  {
    /** The provider and model of a run whose input's `forwardedProps` names none. */
    provider: Type.Optional(ProviderId),
    model: Type.Optional(ModelId),
  },
  { additionalProperties: false },
);
export type AgUiConfig = Static<typeof AgUiConfig>;
