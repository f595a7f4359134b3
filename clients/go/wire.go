package agenticdriver

// Validators for the response shapes of wire protocol 1.0, field for field as the JSON
// Schemas in src/protocol/schemas.ts. Cross-field rules live in rules.go.

var (
	providerIDRule = pattern(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,79}$`)
	modelIDRule    = pattern(`^[a-zA-Z0-9][a-zA-Z0-9._:/\[\]-]{0,199}$`)
	toolNameRule   = pattern(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)
	opaqueKeyRule  = pattern(`^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$`)
	uuidRule       = pattern(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	hostTimeRule   = allOf(timestampRule(), pattern(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`))
	sha256Rule     = pattern(`^[0-9a-f]{64}$`)
	countRule      = integer(0, maxSafeInteger)
	jsonObjectRule = recordOf(anyValue(), 0)
	mediaTypeRule  = oneOf("text/plain", "text/markdown", "image/png", "image/jpeg", "image/webp", "application/pdf")
	idRule256      = boundedString(1, 256)
)

var errorInfoRule = object(false,
	req("code", nonEmptyString()),
	req("message", anyString()),
	req("retryable", boolean()),
	opt("outcome", oneOf(OutcomeUncertain)),
)

var usageRule = object(false,
	opt("inputTokens", countRule),
	opt("outputTokens", countRule),
	opt("cachedInputTokens", countRule),
	opt("reasoningTokens", countRule),
	opt("costUsd", number(0, maxFloat)),
	opt("apiEquivalentCostUsd", number(0, maxFloat)),
)

const maxFloat = 1.7976931348623157e308

var toolCallRule = object(false,
	req("id", idRule256),
	req("name", toolNameRule),
	req("arguments", jsonObjectRule),
)

var sourceLocationRule = object(true,
	opt("documentId", opaqueKeyRule),
	opt("page", integer(1, 1_000_000)),
	opt("pageEnd", integer(1, 1_000_000)),
	opt("startLine", integer(1, 1_000_000)),
	opt("endLine", integer(1, 1_000_000)),
	opt("section", boundedString(0, 256)),
	opt("threadId", opaqueKeyRule),
	opt("messageId", opaqueKeyRule),
)

func contextSourceFields() []field {
	return []field{
		req("id", opaqueKeyRule),
		req("revision", opaqueKeyRule),
		opt("title", boundedString(0, 256)),
		opt("uri", allOf(boundedString(0, 2048), pattern(`^(https|app)://\S+$`))),
		opt("location", sourceLocationRule),
	}
}

var contextSourceRule = object(true, contextSourceFields()...)

var contextManifestRule = object(true, append(contextSourceFields(),
	req("mediaType", mediaTypeRule),
	req("bytes", integer(1, 33_554_432)),
	req("sha256", sha256Rule),
	req("origin", oneOf("inline", "reference", "retrieval")),
	opt("expiresAt", timestampRule()),
)...)

var draftArtifactRule = object(true,
	req("name", allOf(boundedString(1, 128), pattern(`^[^/\\\x00-\x1f]+$`))),
	req("mediaType", oneOf("text/plain", "text/markdown", "application/json")),
	req("id", str(strOpts{format: isUUID})),
	req("status", oneOf("draft")),
	req("content", boundedString(0, 262_144)),
	req("sha256", sha256Rule),
	req("sourceIds", arrayOf(opaqueKeyRule, arrayOpts{max: 16, unique: true})),
)

var extractorRule = object(true, req("id", boundedString(1, 128)), req("version", boundedString(1, 128)))

var ingestionManifestRule = object(true,
	req("format", oneOf("text", "markdown", "pdf", "email")),
	req("inputSha256", sha256Rule),
	req("inputBytes", integer(1, 33_554_432)),
	req("extractor", extractorRule),
	opt("ocrExtractor", extractorRule),
	req("chunker", object(true, req("id", oneOf("source-lines-v1")), req("maxBytes", integer(128, 16_384)))),
	req("extractedTextBytes", integer(0, 1_048_576)),
	req("indexedTextBytes", integer(0, 1_048_576)),
	req("chunks", integer(1, 256)),
	opt("pages", object(true,
		req("total", integer(1, 1000)),
		req("ocr", arrayOf(integer(1, 1000), arrayOpts{max: 1000})),
		req("empty", arrayOf(integer(1, 1000), arrayOpts{max: 1000})),
	)),
	opt("messages", object(true, req("total", integer(1, 1000)), req("empty", integer(0, 1000)))),
)

var retrievalResultRule = object(true,
	req("corpus", opaqueKeyRule),
	req("index", object(true,
		req("providerId", nonEmptyString()),
		req("vendor", nonEmptyString()),
		opt("accountId", nonEmptyString()),
		req("authMode", oneOf("api-key", "none")),
		req("model", nonEmptyString()),
		req("dimensions", integer(1, 4096)),
		req("metric", oneOf("cosine")),
		req("version", nonEmptyString()),
	)),
	req("hits", arrayOf(object(true,
		req("chunkId", opaqueKeyRule),
		req("source", contextSourceRule),
		req("text", boundedString(1, 16_384)),
		req("score", number(-1, 1)),
		req("documentSha256", sha256Rule),
		opt("ingestion", ingestionManifestRule),
	), arrayOpts{max: 16})),
	req("truncated", boolean()),
)

var sessionInfoRule = object(false,
	req("id", uuidRule),
	req("revision", integer(0, maxSafeInteger)),
	req("provider", providerIDRule),
	req("model", modelIDRule),
	req("mode", oneOf("history", "native")),
	req("state", oneOf("ready", "running", "interrupted")),
	req("createdAt", hostTimeRule),
	req("updatedAt", hostTimeRule),
	opt("expiresAt", hostTimeRule),
)

var idlePolicyRule = oneOf("pause", "continue")

var approvalRequestRule = object(false,
	req("approvalId", idRule256),
	req("runId", idRule256),
	req("call", toolCallRule),
	req("requestedAt", timestampRule()),
	opt("expiresAt", timestampRule()),
	req("idlePolicy", idlePolicyRule),
)

var approvalResolutionRule = object(false,
	req("approvalId", idRule256),
	req("runId", idRule256),
	req("callId", idRule256),
	req("outcome", oneOf("approved", "denied", "cancelled", "expired")),
	req("decidedAt", timestampRule()),
)

var toolExecutionRule = object(false,
	req("executionId", idRule256),
	req("runId", idRule256),
	req("call", toolCallRule),
)

var runResultRule = object(false,
	req("runId", nonEmptyString()),
	req("provider", nonEmptyString()),
	req("model", nonEmptyString()),
	req("text", anyString()),
	opt("output", anyValue()),
	req("usage", usageRule),
	req("steps", integer(1, maxSafeInteger)),
	req("finishReason", oneOf("stop", "length")),
	opt("session", sessionInfoRule),
	opt("sources", arrayOf(contextManifestRule, arrayOpts{max: 16})),
	opt("artifacts", arrayOf(draftArtifactRule, arrayOpts{max: 1})),
	opt("retrieval", retrievalResultRule),
)

// envelopeRule checks the fields every event carries.
var envelopeRule = object(false,
	req("type", nonEmptyString()),
	req("runId", nonEmptyString()),
	req("sequence", integer(1, maxSafeInteger)),
	req("timestamp", timestampRule()),
	opt("optional", boolean()),
)

// eventPayloadRules holds the payload fields of the 13 known event types.
var eventPayloadRules = map[string]rule{
	EventRunStarted:             object(false, req("provider", nonEmptyString()), req("model", nonEmptyString())),
	EventStepStarted:            object(false, req("step", integer(1, maxSafeInteger))),
	EventTextDelta:              object(false, req("text", anyString())),
	EventRunProgress:            object(false, req("phase", oneOf("model", "tool", "context"))),
	EventApprovalRequested:      object(false, req("approval", approvalRequestRule)),
	EventApprovalResolved:       object(false, req("resolution", approvalResolutionRule)),
	EventToolExecutionRequested: object(false, req("execution", toolExecutionRule)),
	EventToolCalled:             object(false, req("call", toolCallRule)),
	EventToolCompleted:          object(false, req("callId", nonEmptyString()), req("output", anyValue())),
	EventUsageReported:          object(false, req("step", integer(1, maxSafeInteger)), req("usage", usageRule)),
	EventRunCompleted:           object(false, req("result", runResultRule)),
	EventRunFailed:              object(false, req("error", errorInfoRule)),
	EventRunCancelled:           object(false, req("error", errorInfoRule)),
}

var protocolInfoRule = object(false,
	req("protocol", oneOf("agenticdriver")),
	req("version", oneOf(ProtocolVersion)),
	req("supportedVersions", allOf(arrayOf(nonEmptyString(), arrayOpts{}), containsString(ProtocolVersion))),
	req("features", arrayOf(anyString(), arrayOpts{})),
)

func containsString(want string) rule {
	return func(v any, path string) error {
		for _, item := range v.([]any) {
			if item == want {
				return nil
			}
		}
		return violation(path, "must contain %q", want)
	}
}

var capabilitiesRule = withExtra(
	object(false, req("tools", boolean()), req("textStreaming", boolean())),
	[]string{"tools", "textStreaming"}, boolean())

var providerRule = object(false,
	req("id", nonEmptyString()),
	req("name", anyString()),
	req("vendor", nonEmptyString()),
	req("authMode", oneOf("api-key", "cli-session", "none")),
	req("capabilities", capabilitiesRule),
	opt("models", arrayOf(anyString(), arrayOpts{})),
	opt("usageStatId", anyString()),
	opt("inputMediaTypes", recordOf(arrayOf(mediaTypeRule, arrayOpts{max: 6}), 0)),
	opt("health", object(false,
		req("status", oneOf("ready", "unauthenticated", "unavailable", "unsupported", "unknown")),
		req("code", nonEmptyString()),
		req("message", anyString()),
		req("checkedAt", timestampRule()),
	)),
	opt("modelCatalog", object(false,
		req("source", oneOf("provider", "configured", "unavailable")),
		req("models", arrayOf(nonEmptyString(), arrayOpts{max: 1000})),
		req("complete", boolean()),
	)),
)

var providerListRule = object(false, req("providers", arrayOf(providerRule, arrayOpts{})))

var toolExecutionReceiptRule = object(false,
	req("executionId", idRule256),
	req("runId", idRule256),
	req("callId", idRule256),
	req("status", oneOf("progress", "accepted")),
)
