/**
 * Scoped retrieval: search, index, delete and ingest. The token's corpus grant is checked right
 * after the schema; each call then takes an admission slot like a run and is cancelled when the
 * client disconnects or the host shuts down.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { DriverError } from '../../protocol/errors.js';
import type { IngestRequest, RetrievalDeleteRequest, RetrievalIndexRequest, RetrievalSearch } from '../../protocol/schemas.js';
import type { CallContext } from '../../extensions/retrieval/service.js';
import type { HostContext } from '../context.js';
import { routeOf } from './table.js';
import { corpusNotGranted } from '../../shared/grants.js';

type Operation = 'search' | 'index' | 'delete';

/**
 * An ingest body may carry a whole document (a PDF of up to 8 MiB is 11.2 MB of base64), so its
 * route takes more than the host's general body limit; every other route keeps that one.
 */
export const INGEST_BODY_BYTES = 12 * 1024 * 1024;

export const retrievalRoutes: FastifyPluginAsync<{ context: HostContext }> = async (app, { context }) => {
  const retrieval = context.retrieval;
  if (!retrieval) return;

  /** Grant, then a slot, then the work under a signal that a disconnect or shutdown aborts. */
  async function admitted<T>(request: FastifyRequest, reply: FastifyReply, operation: Operation, corpus: string, work: (call: CallContext) => Promise<T>): Promise<T> {
    const principal = request.principal;
    if (!principal.retrieval[operation].has(corpus)) throw corpusNotGranted(corpus, operation);
    let release: () => void;
    try {
      release = context.admission.acquire(principal.subject);
    } catch (error) {
      context.prometheus?.admissionRejected();
      throw error;
    }
    const controller = new AbortController();
    context.active.add(controller, reply.raw);
    const onClose = () => {
      if (!reply.raw.writableFinished) controller.abort(new DriverError('CANCELLED', 'The client disconnected.'));
    };
    reply.raw.on('close', onClose);
    try {
      return await work({ subject: principal.subject, tokenId: principal.tokenId, signal: controller.signal });
    } finally {
      release();
    }
  }

  app.route<{ Body: RetrievalSearch }>({
    ...routeOf('searchRetrieval'),
    handler: async (request, reply) => admitted(request, reply, 'search', request.body.corpus, (call) => retrieval.search(request.body, call)),
  });
  app.route<{ Body: RetrievalIndexRequest }>({
    ...routeOf('indexSource'),
    handler: async (request, reply) => admitted(request, reply, 'index', request.body.corpus, (call) => retrieval.index(request.body, call)),
  });
  app.route<{ Body: RetrievalDeleteRequest }>({
    ...routeOf('deleteSource'),
    handler: async (request, reply) => admitted(request, reply, 'delete', request.body.corpus, (call) => retrieval.delete(request.body, call)),
  });
  if (retrieval.ingests) {
    app.route<{ Body: IngestRequest }>({
      ...routeOf('ingestDocument'),
      bodyLimit: Math.max(INGEST_BODY_BYTES, app.initialConfig.bodyLimit ?? 0),
      handler: async (request, reply) => admitted(request, reply, 'index', request.body.corpus, (call) => retrieval.ingest(request.body, call)),
    });
  }
};
