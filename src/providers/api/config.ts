/** The config entry shared by the API kinds: one strict TypeBox schema per kind. */
import { Type, type Static } from '@sinclair/typebox';
import { MediaType, ModelId, ProviderId } from '../../protocol/schemas.js';
import { SecretRef } from '../../shared/secret-ref.js';

export function apiProviderConfig<K extends string>(kind: K, $id: string, baseUrlRequired: boolean) {
  const baseUrl = Type.String({ minLength: 1, maxLength: 2048 });
  return Type.Object(
    {
      kind: Type.Literal(kind),
      id: ProviderId,
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      models: Type.Array(ModelId, { maxItems: 1000, uniqueItems: true }),
      apiKeyRef: SecretRef,
      baseUrl: baseUrlRequired ? baseUrl : Type.Optional(baseUrl),
      inputMediaTypes: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.Array(MediaType, { maxItems: 6, uniqueItems: true }))),
    },
    { additionalProperties: false, $id },
  );
}

/** The fields every API kind's entry has (baseUrl optional in the type; required kinds enforce it in the schema). */
export interface ApiProviderEntry {
  kind: string;
  id: string;
  name?: string;
  models: string[];
  apiKeyRef: Static<typeof SecretRef>;
  baseUrl?: string;
  inputMediaTypes?: Record<string, Static<typeof MediaType>[]>;
}
