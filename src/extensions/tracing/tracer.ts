/**
 * OpenTelemetry traces, opt-in (`tracing` in the host config): a span per run with child
 * spans per retrieval search, model step, tool call and approval wait, named and attributed after the GenAI
 * semantic conventions (`invoke_agent`, `chat <model>`, `execute_tool <tool>`, `gen_ai.*`).
 * Spans are derived from the run's event stream as it is delivered, so the run loop carries
 * no tracing code and a tracing failure can never touch a run. Spans hold ids, names,
 * counts, finish reasons and error codes — never subjects, tokens, prompts, tool arguments or
 * outputs — unless the operator sets `captureContent`, which adds the input, the tool
 * arguments and results, and the output text.
 */
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { RunEvent, RunRequest } from '../../protocol/schemas.js';
import type { RunTap } from '../../http/observers.js';
import { DEFAULT_OTLP_TRACES, type TracingConfig } from './config.js';

/** The host's tracer: its own provider (never the process-global one), flushed and shut down with the host. */
export class HostTracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(config: TracingConfig, exporter?: SpanExporter) {
    const processor = exporter
      ? new SimpleSpanProcessor(exporter)
      : new BatchSpanProcessor(new OTLPTraceExporter({ url: config.endpoint ?? DEFAULT_OTLP_TRACES }));
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName ?? 'agenticdriver' }),
      spanProcessors: [processor],
    });
    this.tracer = this.provider.getTracer('agenticdriver');
    this.captureContent = config.captureContent === true;
  }

  private readonly captureContent: boolean;

  /** Builds the run's spans from its events on their way (never changing them). */
  tap(run: { request: RunRequest; vendor: string | undefined }): RunTap {
    const spans = new RunSpans(this.tracer, run.request, run.vendor, this.captureContent);
    return {
      event: (event) => {
        try {
          spans.observe(event);
        } catch {
          // Tracing never changes a run.
        }
      },
      end: () => spans.endAll(),
    };
  }

  async flush(): Promise<void> {
    await this.provider.forceFlush();
  }

  async close(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
  }
}

class RunSpans {
  private run: Span | undefined;
  private step: Span | undefined;
  /** The search of a run with `retrieval`: from its `context` progress to the first model step. */
  private retrieval: Span | undefined;
  private readonly tools = new Map<string, Span>();
  private readonly approvals = new Map<string, Span>();

  constructor(
    private readonly tracer: Tracer,
    private readonly request: RunRequest,
    private readonly vendor: string | undefined,
    private readonly captureContent: boolean,
  ) {}

  private child(name: string, kind: SpanKind, at: number, attributes: Record<string, string | number | boolean | string[]>, parent = this.run): Span {
    const ctx = parent ? trace.setSpan(otelContext.active(), parent) : otelContext.active();
    return this.tracer.startSpan(name, { kind, startTime: at, attributes }, ctx);
  }

  private common(): Record<string, string> {
    return {
      'gen_ai.request.model': this.request.model,
      ...(this.vendor ? { 'gen_ai.provider.name': this.vendor } : {}),
      'agenticdriver.provider.id': this.request.provider,
    };
  }

  observe(event: RunEvent): void {
    const at = Date.parse(event.timestamp);
    switch (event.type) {
      case 'run.started': {
        const attributes: Record<string, string | number | boolean | string[]> = { 'gen_ai.operation.name': 'invoke_agent', ...this.common(), 'agenticdriver.run.id': event.runId };
        if (this.captureContent) attributes['gen_ai.input.messages'] = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: this.request.input }] }]);
        this.run = this.tracer.startSpan('invoke_agent', { kind: SpanKind.INTERNAL, startTime: at, attributes });
        return;
      }
      case 'run.progress':
        if (event.phase === 'context' && this.request.retrieval && !this.retrieval && this.step === undefined) {
          const corpus = this.request.retrieval.corpus;
          this.retrieval = this.child(`retrieval ${corpus}`, SpanKind.INTERNAL, at, { 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': corpus });
        }
        return;
      case 'step.started':
        this.endRetrieval(at);
        this.endStep(at);
        this.endTools(at);
        this.step = this.child(`chat ${this.request.model}`, SpanKind.CLIENT, at, { 'gen_ai.operation.name': 'chat', ...this.common(), 'agenticdriver.step': event.step });
        return;
      case 'usage.reported':
        if (event.usage.inputTokens !== undefined) this.step?.setAttribute('gen_ai.usage.input_tokens', event.usage.inputTokens);
        if (event.usage.outputTokens !== undefined) this.step?.setAttribute('gen_ai.usage.output_tokens', event.usage.outputTokens);
        return;
      case 'tool.called': {
        this.endStep(at, ['tool_calls']);
        const attributes: Record<string, string | number | boolean | string[]> = {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': event.call.name,
          'gen_ai.tool.call.id': event.call.id,
        };
        if (this.captureContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(event.call.arguments);
        this.tools.set(event.call.id, this.child(`execute_tool ${event.call.name}`, SpanKind.INTERNAL, at, attributes));
        return;
      }
      case 'tool.execution.requested':
        this.tools.get(event.execution.call.id)?.setAttribute('agenticdriver.tool.kind', 'application');
        return;
      case 'approval.requested': {
        const parent = this.tools.get(event.approval.call.id);
        this.approvals.set(
          event.approval.approvalId,
          this.child('agenticdriver.approval.wait', SpanKind.INTERNAL, at, { 'agenticdriver.approval.id': event.approval.approvalId, 'gen_ai.tool.name': event.approval.call.name }, parent),
        );
        return;
      }
      case 'approval.resolved': {
        const span = this.approvals.get(event.resolution.approvalId);
        span?.setAttribute('agenticdriver.approval.outcome', event.resolution.outcome);
        span?.end(at);
        this.approvals.delete(event.resolution.approvalId);
        return;
      }
      case 'tool.completed': {
        const span = this.tools.get(event.callId);
        if (this.captureContent) span?.setAttribute('gen_ai.tool.call.result', JSON.stringify(event.output));
        span?.end(at);
        this.tools.delete(event.callId);
        return;
      }
      case 'run.completed': {
        const { result } = event;
        this.endStep(at, [result.finishReason]);
        if (result.usage.inputTokens !== undefined) this.run?.setAttribute('gen_ai.usage.input_tokens', result.usage.inputTokens);
        if (result.usage.outputTokens !== undefined) this.run?.setAttribute('gen_ai.usage.output_tokens', result.usage.outputTokens);
        this.run?.setAttribute('gen_ai.response.finish_reasons', [result.finishReason]);
        this.run?.setAttribute('agenticdriver.run.steps', result.steps);
        this.run?.setAttribute('agenticdriver.run.status', 'completed');
        if (this.captureContent) this.run?.setAttribute('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: result.text }] }]));
        this.run?.setStatus({ code: SpanStatusCode.OK });
        this.endAll(at);
        return;
      }
      case 'run.failed':
      case 'run.cancelled': {
        // The code only: an error message may quote a vendor's reply.
        const code = event.error.code;
        for (const span of [this.retrieval, this.step, ...this.tools.values(), ...this.approvals.values(), this.run]) {
          span?.setAttribute('error.type', code);
          span?.setStatus({ code: SpanStatusCode.ERROR, message: code });
        }
        this.run?.setAttribute('agenticdriver.run.status', event.type === 'run.failed' ? 'failed' : 'cancelled');
        this.endAll(at);
        return;
      }
      default:
        return;
    }
  }

  private endRetrieval(at: number): void {
    this.retrieval?.end(at);
    this.retrieval = undefined;
  }

  private endStep(at: number, finishReasons?: string[]): void {
    if (!this.step) return;
    if (finishReasons) this.step.setAttribute('gen_ai.response.finish_reasons', finishReasons);
    this.step.end(at);
    this.step = undefined;
  }

  private endTools(at: number): void {
    for (const span of this.approvals.values()) span.end(at);
    this.approvals.clear();
    for (const span of this.tools.values()) span.end(at);
    this.tools.clear();
  }

  /** Ends whatever is still open (a consumer that stopped reading ends the run's spans too). */
  endAll(at = Date.now()): void {
    this.endRetrieval(at);
    this.endStep(at);
    this.endTools(at);
    this.run?.end(at);
    this.run = undefined;
  }
}
