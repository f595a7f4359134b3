/**
 * Interactive approvals (feature `interactive-approvals`): a person decides a run's pending
 * tool call through `POST /v1/approvals/decisions`. Config section `approvals`; a token's
 * `approveTools` names the tools whose calls it may decide.
 */
import { Type } from '@sinclair/typebox';
import { ToolName } from '../../protocol/schemas.js';
import { defineExtension } from '../../http/extension.js';
import { ApprovalsConfig } from './config.js';
import type { ApprovalRegistry } from './registry.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Pending approvals and their decisions (the operator endpoints decide any subject's). */
    approvals: ApprovalRegistry;
  }
}

export const approvalsExtension = defineExtension({
  id: 'approvals',
  features: ['interactive-approvals'],
  configSchema: ApprovalsConfig,
  grants: { approveTools: { schema: Type.Array(ToolName, { maxItems: 32, uniqueItems: true }) } },
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
