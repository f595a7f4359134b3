/**
 * AG-UI runs (feature `ag-ui`) at `POST /ag-ui`: an AG-UI `RunAgentInput` in, AG-UI events out
 * (server-sent events), each run a view of one background run (a job), so a frontend tool's
 * answer or an approval's decision, sent with the next AG-UI run to any replica, continues the
 * same run from its checkpoint (docs/agent-protocols.md). Needs `jobs.interactive`. Config
 * section `agUi`; a token needs `agUi: true` and the `jobs` grants `submit` and `read`, and its
 * providers, tools and `applicationTools` grants (the frontend tools) apply.
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';
import { AgUiConfig } from './config.js';

export const agUiExtension = defineExtension({
  id: 'agUi',
  features: ['ag-ui'],
  configSchema: AgUiConfig,
  grants: {
    /** The `/ag-ui` endpoint. */
    agUi: { schema: Type.Boolean(), principal: (granted: boolean): Record<string, string[]> => (granted ? { agUi: [] } : {}) },
  },
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
