/** The CLI provider kinds and factories. */
export { codex, codexKind, CodexProviderConfig } from './codex.js';
export { claudeCode, claudeCodeKind, ClaudeCodeProviderConfig } from './claude-code.js';
export { geminiCli, geminiCliKind, GeminiCliProviderConfig } from './gemini-cli.js';
export type { CliProviderOptions } from './config.js';
