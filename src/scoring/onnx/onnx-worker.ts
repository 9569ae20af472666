/**
 * Worker thread of the ONNX scorer: owns one InferenceSession, builds the padded int64 inputs and
 * runs the model, so `session.run` never blocks the event loop. Replies with two floats per row
 * (see `OnnxRunResult`), never the whole logits tensor.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

export interface OnnxWorkerData {
  modelPath: string;
  intraOpThreads: number;
}

/** How to read one row's answer from the logits. */
export type OnnxPick =
  /** logits [batch, 1] or [batch]: [logit, 0]. */
  | { kind: 'scalar' }
  /** logits [batch, labels]: [logits[no], logits[yes]] (column indices). */
  | { kind: 'two-class'; yes: number; no: number }
  /** logits [batch, seq, vocab]: the last real position's [logits[no], logits[yes]] (token ids). */
  | { kind: 'causal-lm'; yes: number; no: number }
  /** logits [batch, labels] of a multi-label head: [logits[index], log Σ exp(logits) when softmax, else 0]. */
  | { kind: 'head'; index: number; softmax: boolean }
  /** Start-up probe: nothing read, only the output's dims reported. */
  | { kind: 'probe' };

export interface OnnxRunRequest {
  type: 'run';
  id: number;
  /** Every row's token ids, concatenated. */
  ids: Int32Array;
  /** Row lengths (each > 0); rows are right-padded to the longest. */
  lengths: Int32Array;
  padTokenId: number;
  pick: OnnxPick;
}

export type OnnxWorkerMessage =
  | { type: 'ready'; inputNames: string[]; outputNames: string[]; outputName: string }
  | { type: 'load-error'; message: string }
  | { type: 'result'; id: number; dims: number[]; values: Float32Array }
  | { type: 'error'; id: number; message: string };

if (!parentPort) throw new Error('onnx-worker.ts must run as a worker thread');
const port: MessagePort = parentPort;
const { modelPath, intraOpThreads } = workerData as OnnxWorkerData;

function post(message: OnnxWorkerMessage, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

async function load(): Promise<ort.InferenceSession | undefined> {
  try {
    return await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: intraOpThreads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
      // Idle intra-op threads sleep instead of spinning: they share the cores with the event loop,
      // the tokenizer and the other workers (spinning halved throughput on 2 loaded vCPUs).
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
  } catch (error) {
    post({ type: 'load-error', message: (error as Error).message });
    return undefined;
  }
}

function feeds(session: ort.InferenceSession, request: OnnxRunRequest): Record<string, ort.Tensor> {
  const wantsPositions = session.inputNames.some((name) => name.includes('position_ids'));
  const rows = request.lengths.length;
  let width = 0;
  for (const length of request.lengths) width = Math.max(width, length);
  const ids = new BigInt64Array(rows * width);
  const mask = new BigInt64Array(rows * width);
  const positions = new BigInt64Array(wantsPositions ? rows * width : 0);
  const pad = BigInt(request.padTokenId);
  let offset = 0;
  for (let row = 0; row < rows; row++) {
    const length = request.lengths[row]!;
    const base = row * width;
    for (let t = 0; t < length; t++) {
      ids[base + t] = BigInt(request.ids[offset + t]!);
      mask[base + t] = 1n;
      if (wantsPositions) positions[base + t] = BigInt(t);
    }
    for (let t = length; t < width; t++) {
      ids[base + t] = pad;
      if (wantsPositions) positions[base + t] = 1n;
    }
    offset += length;
  }
  const dims = [rows, width];
  const result: Record<string, ort.Tensor> = {};
  for (const name of session.inputNames) {
    if (name.includes('attention_mask')) result[name] = new ort.Tensor('int64', mask, dims);
    else if (name.includes('position_ids')) result[name] = new ort.Tensor('int64', positions, dims);
    else if (name.includes('token_type_ids')) result[name] = new ort.Tensor('int64', new BigInt64Array(rows * width), dims);
    else result[name] = new ort.Tensor('int64', ids, dims);
  }
  return result;
}

function pickRows(request: OnnxRunRequest, logits: Float32Array, dims: readonly number[]): Float32Array {
  const rows = request.lengths.length;
  const values = new Float32Array(rows * 2);
  const { pick } = request;
  if (pick.kind === 'probe') return values;
  for (let row = 0; row < rows; row++) {
    if (pick.kind === 'scalar') {
      values[row * 2] = logits[row * (dims[1] ?? 1)]!;
    } else if (pick.kind === 'two-class') {
      const width = dims[1]!;
      values[row * 2] = logits[row * width + pick.no]!;
      values[row * 2 + 1] = logits[row * width + pick.yes]!;
    } else if (pick.kind === 'head') {
      const width = dims[1]!;
      const start = row * width;
      values[row * 2] = logits[start + pick.index]!;
      if (pick.softmax) {
        let max = -Infinity;
        for (let column = 0; column < width; column++) max = Math.max(max, logits[start + column]!);
        let total = 0;
        for (let column = 0; column < width; column++) total += Math.exp(logits[start + column]! - max);
        values[row * 2 + 1] = max + Math.log(total);
      }
    } else {
      const [, sequence, vocab] = dims as [number, number, number];
      const last = (row * sequence + request.lengths[row]! - 1) * vocab;
      values[row * 2] = logits[last + pick.no]!;
      values[row * 2 + 1] = logits[last + pick.yes]!;
    }
  }
  return values;
}

function serve(session: ort.InferenceSession): void {
  const outputName = session.outputNames.includes('logits') ? 'logits' : session.outputNames[0]!;
  post({ type: 'ready', inputNames: [...session.inputNames], outputNames: [...session.outputNames], outputName });
  port.on('message', async (request: OnnxRunRequest) => {
    try {
      const outputs = await session.run(feeds(session, request), [outputName]);
      const output = outputs[outputName]!;
      if (output.type !== 'float32') throw new Error(`output ${outputName} is ${output.type}, expected float32`);
      const dims = output.dims.map(Number);
      const values = pickRows(request, output.data as Float32Array, dims);
      output.dispose();
      post({ type: 'result', id: request.id, dims, values }, [values.buffer as ArrayBuffer]);
    } catch (error) {
      post({ type: 'error', id: request.id, message: (error as Error).message });
    }
  });
}

const session = await load();
if (session) serve(session);
else port.close();
