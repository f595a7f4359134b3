/** Loopback vendor servers for provider tests. See ./README.md. */
export * from './script.js';
export { startVendorServer, encodeSse, type Dialect, type RecordedRequest, type VendorServer, type VendorServerOptions } from './server.js';
export { startOpenAIResponsesServer, openAIResponsesDialect, renderResponses } from './openai-responses.js';
export { startChatCompletionsServer, chatCompletionsDialect, renderChatCompletion } from './chat-completions.js';
export { startAnthropicMessagesServer, anthropicMessagesDialect, renderMessages } from './anthropic-messages.js';
export { startGeminiServer, geminiDialect, renderGenerateContent } from './gemini.js';
export { makeServerIdentity, type ServerIdentity } from '../support/pki.js';
export { startEmbeddingServer, fakeVector, type EmbeddingServer, type EmbeddingReply } from './embeddings.js';
