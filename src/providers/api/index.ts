/** The API provider kinds. */
export { anthropicKind, anthropicDialect } from './anthropic.js';
export { openAICompatibleKind, openAICompatibleDialect, xaiKind, xaiDialect } from './chat-completions.js';
export { geminiKind, geminiDialect } from './gemini.js';
export { openaiKind, openaiDialect } from './openai.js';
export { ApiProvider, type ApiDialect, type ApiProviderOptions } from './api-provider.js';
export { secureBaseUrl, type TransportOptions } from './transport.js';
