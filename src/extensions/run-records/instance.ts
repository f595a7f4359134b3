/** Run records, started: the recorder of attached runs' events, the read, page and follow endpoints, and retention. */
import type { RunEventsRequest, RunReadRequest } from '../../protocol/schemas.js';
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { routeOf } from '../../http/endpoints.js';
import { retentionTimer } from '../../store/retention.js';
import { DEFAULT_RUN_RETENTION_MS, type RunRecordsConfig } from './config.js';
import { lastEventId, untilClosed } from '../../http/follow.js';
import { follow } from './follow.js';
import { recordAttached } from './recorder.js';
import { RunRecords } from './service.js';

export function create({ config, store, clock, streams, services, logInternalError }: ExtensionDeps<RunRecordsConfig>): ExtensionInstance {
  const retentionMs = config.retentionMs ?? DEFAULT_RUN_RETENTION_MS;
  const records = new RunRecords(store, services.operations?.retentionMs);
  let expiry: { stop(): void } | undefined;
  return {
    observe: {
      tap: (run) => recordAttached(run, { store: store.runs, retentionMs, clock, onError: (error) => logInternalError(error, 'run record') }),
    },
    routes: async (app) => {
      app.route<{ Body: RunReadRequest }>({ ...routeOf('readRun'), handler: async (request) => records.read(request.body.runId, request.principal) });
      app.route<{ Body: RunEventsRequest }>({ ...routeOf('runEvents'), handler: async (request) => records.events(request.body, request.principal) });
      app.route<{ Params: { id: string } }>({
        ...routeOf('streamRun'),
        handler: async (request, reply) => {
          const after = lastEventId(request.headers['last-event-id'], 'INVALID_RUN_CURSOR');
          const row = await records.load(request.params.id, request.principal);
          records.checkCursor(after, row.cursor, 'Last-Event-ID');
          return streams.write(reply, follow(store, row, after, untilClosed(reply.raw)), { headersFirst: true });
        },
      });
    },
    // Records expire only once the host listens and has reaped what dead replicas left.
    start: () => {
      expiry = retentionTimer(retentionMs, () => store.runs.expire(), (error) => logInternalError(error, 'run record retention'));
    },
    close: async () => expiry?.stop(),
  };
}
