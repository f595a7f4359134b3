/**
 * A sentence-embedding model run by the host itself: an ONNX export (e.g. all-MiniLM-L6-v2) with
 * its Hugging Face `tokenizer.json`, loaded from a local directory — nothing is fetched. ONNX
 * Runtime (the `onnxruntime-node` package, an optional peer dependency) runs it on its own
 * threads, so the event loop stays free; tokenising yields between texts. Each text is cut to
 * `maxTokens`; the token vectors are mean-pooled over the attention mask (or the first token is
 * taken, `cls`); the service normalises the result.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { DriverError } from '../../protocol/errors.js';
import type { EmbeddingAdapter, EmbeddingIdentity, EmbeddingResult } from './embedding.js';

export interface LocalModelOptions {
  identity: EmbeddingIdentity;
  /** Holds `model.onnx` (or `onnx/model.onnx`) and `tokenizer.json` (and maybe `tokenizer_config.json`). */
  directory: string;
  maxTokens: number;
  pooling: 'mean' | 'cls';
  threads: number;
}

/** The npm packages the local model needs; the host runs without them until a corpus uses one. */
export const LOCAL_MODEL_PACKAGES = ['onnxruntime-node', '@huggingface/tokenizers'] as const;
/** How long a text is before it is cut: a token is rarely more than this many characters. */
const CHARS_PER_TOKEN = 8;

type Ort = typeof import('onnxruntime-node');
interface Loaded {
  ort: Ort;
  session: import('onnxruntime-node').InferenceSession;
  encode(text: string): number[];
}

/** The model and tokenizer files of a directory; INVALID_CONFIG naming what is missing. */
export function localModelFiles(directory: string): { model: string; tokenizer: string; tokenizerConfig?: string } {
  const model = [join(directory, 'model.onnx'), join(directory, 'onnx', 'model.onnx')].find((path) => existsSync(path));
  const tokenizer = join(directory, 'tokenizer.json');
  if (!model) throw new DriverError('INVALID_CONFIG', `The embedding model directory ${directory} has no model.onnx (nor onnx/model.onnx).`);
  if (!existsSync(tokenizer)) throw new DriverError('INVALID_CONFIG', `The embedding model directory ${directory} has no tokenizer.json.`);
  const tokenizerConfig = join(directory, 'tokenizer_config.json');
  return { model, tokenizer, ...(existsSync(tokenizerConfig) ? { tokenizerConfig } : {}) };
}

/** Whether the runtime packages can be loaded from here (init offers the local model only then). */
export function localModelRuntimeInstalled(): boolean {
  return LOCAL_MODEL_PACKAGES.every((name) => {
    try {
      import.meta.resolve(name);
      return true;
    } catch {
      return false;
    }
  });
}

export const DEFAULT_LOCAL_MODEL_THREADS = Math.max(1, availableParallelism() - 1);

export class LocalModelEmbedder implements EmbeddingAdapter {
  readonly identity: EmbeddingIdentity;
  private loaded: Promise<Loaded> | undefined;
  /** One run at a time: the model already uses `threads` cores. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: LocalModelOptions) {
    this.identity = options.identity;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<EmbeddingResult> {
    const run = this.queue.then(() => this.run(texts, signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    const loaded = await this.loaded?.catch(() => undefined);
    await loaded?.session.release();
  }

  private async run(texts: string[], signal?: AbortSignal): Promise<EmbeddingResult> {
    signal?.throwIfAborted();
    const { ort, session, encode } = await (this.loaded ??= this.load());
    const encoded: number[][] = [];
    for (const text of texts) {
      encoded.push(this.truncate(encode(text.slice(0, this.options.maxTokens * CHARS_PER_TOKEN))));
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
    const width = Math.max(...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(texts.length * width);
    const mask = new BigInt64Array(texts.length * width);
    encoded.forEach((row, index) => row.forEach((id, position) => ((ids[index * width + position] = BigInt(id)), (mask[index * width + position] = 1n))));
    const shape = [texts.length, width];
    const feeds: Record<string, import('onnxruntime-node').Tensor> = {
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
    };
    if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(texts.length * width), shape);
    let outputs;
    try {
      outputs = await session.run(feeds);
    } catch (error) {
      throw new DriverError('EMBEDDING_FAILED', `The local embedding model ${this.identity.model} failed to run.`, { cause: error });
    }
    signal?.throwIfAborted();
    const name = ['last_hidden_state', 'token_embeddings', 'sentence_embedding'].find((candidate) => session.outputNames.includes(candidate)) ?? session.outputNames[0]!;
    const output = outputs[name]!;
    const data = output.data as Float32Array;
    const vectors = encoded.map((row, index) => this.pool(data, output.dims as number[], index, row.length));
    return { vectors, usage: { inputTokens: encoded.reduce((sum, row) => sum + row.length, 0) } };
  }

  /** Keeps the first `maxTokens` tokens, the last one (the end marker) included. */
  private truncate(ids: number[]): number[] {
    const max = this.options.maxTokens;
    return ids.length <= max ? ids : [...ids.slice(0, max - 1), ids[ids.length - 1]!];
  }

  /** One text's vector from the model's output: already pooled ([batch, dims]) or per token ([batch, tokens, dims]). */
  private pool(data: Float32Array, dims: number[], index: number, tokens: number): Float32Array {
    if (dims.length === 2) return data.slice(index * dims[1]!, (index + 1) * dims[1]!);
    const [, width, size] = dims as [number, number, number];
    const base = index * width * size;
    if (this.options.pooling === 'cls') return data.slice(base, base + size);
    const sum = new Float32Array(size);
    for (let position = 0; position < tokens; position += 1) {
      for (let dimension = 0; dimension < size; dimension += 1) sum[dimension]! += data[base + position * size + dimension]!;
    }
    return sum.map((value) => value / tokens);
  }

  private async load(): Promise<Loaded> {
    const files = localModelFiles(this.options.directory);
    let ort: Ort;
    let Tokenizer: typeof import('@huggingface/tokenizers').Tokenizer;
    // ONNX Runtime's Linux build starts a telemetry client that tries HTTPS uploads and leaves
    // mat-debug-<pid>.log and .ses in the temp dir; a self-hosted host sends nothing anywhere.
    process.env.ORT_DISABLE_TELEMETRY ??= '1';
    try {
      ort = await import('onnxruntime-node');
      ({ Tokenizer } = await import('@huggingface/tokenizers'));
    } catch (error) {
      throw new DriverError('EMBEDDING_FAILED', `The local embedding model needs the npm packages ${LOCAL_MODEL_PACKAGES.join(' and ')} (docs/retrieval.md).`, { cause: error });
    }
    try {
      const [model, tokenizerJson, tokenizerConfig] = await Promise.all([
        readFile(files.model),
        readFile(files.tokenizer, 'utf8'),
        files.tokenizerConfig ? readFile(files.tokenizerConfig, 'utf8') : Promise.resolve('{}'),
      ]);
      const session = await ort.InferenceSession.create(model, { intraOpNumThreads: this.options.threads, interOpNumThreads: 1, executionProviders: ['cpu'] });
      const tokenizer = new Tokenizer(JSON.parse(tokenizerJson), JSON.parse(tokenizerConfig));
      return { ort, session, encode: (text) => tokenizer.encode(text).ids };
    } catch (error) {
      throw new DriverError('EMBEDDING_FAILED', `The local embedding model in ${this.options.directory} could not be loaded.`, { cause: error });
    }
  }
}
