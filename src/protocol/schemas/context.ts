/** Context inputs and their manifests, and draft artifacts (run request options and result parts). */
import { Type, type Static } from '@sinclair/typebox';
import { MediaType, OpaqueKey, Sha256, Timestamp } from './common.js';
import { Base64, strict } from './shape.js';

/** Where a passage sits in its source (inline in context sources and indexed chunks). */
export const SourceLocation = Type.Object(
  {
    documentId: Type.Optional(OpaqueKey),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    pageEnd: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    startLine: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    endLine: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    section: Type.Optional(Type.String({ maxLength: 256 })),
    threadId: Type.Optional(OpaqueKey),
    messageId: Type.Optional(OpaqueKey),
  },
  strict,
);

const contextSourceFields = {
  id: OpaqueKey,
  revision: OpaqueKey,
  title: Type.Optional(Type.String({ maxLength: 256 })),
  uri: Type.Optional(Type.String({ maxLength: 2048, pattern: '^(https|app)://\\S+$' })),
  location: Type.Optional(SourceLocation),
};
export const ContextSource = Type.Object(contextSourceFields, { ...strict, $id: 'ContextSource' });

export const ContextInput = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('text'),
        source: Type.Ref(ContextSource),
        mediaType: Type.Union([Type.Literal('text/plain'), Type.Literal('text/markdown')]),
        text: Type.String({ minLength: 1, maxLength: 1_000_000 }),
      },
      strict,
    ),
    Type.Object(
      {
        type: Type.Literal('image'),
        source: Type.Ref(ContextSource),
        mediaType: Type.Union([Type.Literal('image/png'), Type.Literal('image/jpeg'), Type.Literal('image/webp')]),
        data: Base64(44_739_244),
      },
      strict,
    ),
    Type.Object(
      { type: Type.Literal('pdf'), source: Type.Ref(ContextSource), mediaType: Type.Literal('application/pdf'), data: Base64(44_739_244) },
      strict,
    ),
    Type.Object({ type: Type.Literal('reference'), id: OpaqueKey, revision: OpaqueKey, mediaType: MediaType }, strict),
  ],
  { $id: 'ContextInput' },
);

export const ContextManifest = Type.Object(
  {
    ...contextSourceFields,
    mediaType: MediaType,
    bytes: Type.Integer({ minimum: 1, maximum: 33_554_432 }),
    sha256: Sha256,
    origin: Type.Union([Type.Literal('inline'), Type.Literal('reference'), Type.Literal('retrieval')]),
    expiresAt: Type.Optional(Timestamp),
  },
  { ...strict, $id: 'ContextManifest' },
);

const ArtifactName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/\\\\\\u0000-\\u001f]+$' });
const ArtifactMediaType = Type.Union([Type.Literal('text/plain'), Type.Literal('text/markdown'), Type.Literal('application/json')]);

export const OutputArtifactRequest = Type.Object({ name: ArtifactName, mediaType: ArtifactMediaType }, strict);

export const DraftArtifact = Type.Object(
  {
    name: ArtifactName,
    mediaType: ArtifactMediaType,
    id: Type.String({ format: 'uuid' }),
    status: Type.Literal('draft'),
    content: Type.String({ maxLength: 262_144 }),
    sha256: Sha256,
    sourceIds: Type.Array(OpaqueKey, { maxItems: 16, uniqueItems: true }),
  },
  { ...strict, $id: 'DraftArtifact' },
);

export type ContextSource = Static<typeof ContextSource>;
