/** The in-process runtime and everything needed to embed it. */
export * from './protocol/index.js';
export { AgenticDriver, type DriverOptions, type DriverLimits, type RunOptions, type PreparedRun } from './runtime/driver.js';
export type { ProviderAdapter, ProviderInfo, ProviderRequest, ProviderPart, ProviderMessage, ProviderInspection } from './providers/contract/v1.js';
export type { HostTool, ToolContext, ApproveCallback } from './runtime/tools.js';
export type { ApiEquivalentCost, RunStartRecord, UsageCoverage, UsageRecord, UsageSource } from './runtime/usage-record.js';
export type { MeteringOptions } from './runtime/metering.js';
export { BUILTIN_PRICES, type ModelPrice } from './runtime/pricing.js';
export type { Clock } from './shared/clock.js';
export { MockProvider, parseMockScript, type MockScript } from './providers/mock.js';
export type { ApprovalService, RunServices, ToolExecutionService } from './runtime/services.js';
// Interactive approvals and application tools, for embedders that wire them in themselves.
export { ApprovalRegistry, type ApprovalPolicy } from './extensions/approvals/registry.js';
export { ToolExecutionRegistry, type ApplicationToolPolicy } from './extensions/application-tools/registry.js';
