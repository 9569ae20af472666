/**
 * The ONNX scorer's worker threads (`onnx-worker.ts`, one InferenceSession each): start-up, runs
 * sent to the least-busy worker, close. Workers are unref'd while idle, so a forgotten scorer
 * does not keep the process alive; a worker that dies fails its own runs and takes no more.
 */
import type { Worker } from 'node:worker_threads';
import { toWinnowerError, type WinnowerError, wnwError } from '../../errors.js';
import { disableOnnxRuntimeTelemetry } from '../../util/onnxruntime-telemetry.js';
import { startWorker } from '../../util/worker.js';
import type { OnnxPick, OnnxRunRequest, OnnxWorkerData, OnnxWorkerMessage } from './onnx-worker.js';

export interface OnnxSessionInfo {
  inputNames: string[];
  outputNames: string[];
  /** The output read: `logits` when the graph has one, else the first. */
  outputName: string;
}

export interface OnnxBatch {
  /** Every row's token ids, concatenated (transferred to the worker). */
  ids: Int32Array;
  lengths: Int32Array;
  padTokenId: number;
  pick: OnnxPick;
}

export interface OnnxRunResult {
  /** Dims of the model's output tensor. */
  dims: number[];
  /** Two floats per row, as `OnnxPick` describes. */
  values: Float32Array;
}

interface Pending {
  resolve(result: OnnxRunResult): void;
  reject(error: unknown): void;
}

interface Slot {
  worker: Worker;
  /** Sum of the costs (padded tokens) of the runs in flight. */
  load: number;
  pending: Map<number, Pending>;
  failure?: WinnowerError;
}

export interface OnnxPoolOptions {
  modelPath: string;
  workers: number;
  intraOpThreads: number;
}

export class OnnxWorkerPool {
  readonly #slots: Slot[];
  readonly #modelPath: string;
  readonly #inFlight = new Set<Promise<unknown>>();
  #nextId = 1;
  #closing: Promise<void> | undefined;

  private constructor(modelPath: string, workers: Worker[]) {
    this.#modelPath = modelPath;
    this.#slots = workers.map((worker) => ({ worker, load: 0, pending: new Map() }));
    for (const slot of this.#slots) this.#listen(slot);
  }

  /** Starts the workers and waits until each has loaded the model. */
  static async start(options: OnnxPoolOptions): Promise<{ pool: OnnxWorkerPool; info: OnnxSessionInfo }> {
    const data: OnnxWorkerData = { modelPath: options.modelPath, intraOpThreads: options.intraOpThreads };
    disableOnnxRuntimeTelemetry();
    const workers = Array.from({ length: options.workers }, () => startWorker('./onnx-worker', import.meta.url, data));
    const ready = await Promise.allSettled(workers.map((worker) => waitReady(worker, options.modelPath)));
    const failed = ready.find((result) => result.status === 'rejected');
    if (failed) {
      await Promise.all(workers.map((worker) => worker.terminate()));
      throw failed.reason;
    }
    const info = (ready[0] as PromiseFulfilledResult<OnnxSessionInfo>).value;
    for (const worker of workers) worker.unref();
    return { pool: new OnnxWorkerPool(options.modelPath, workers), info };
  }

  /** Workers still able to take runs. */
  get alive(): number {
    return this.#slots.filter((slot) => !slot.failure).length;
  }

  /** Sends one batch to the least-busy live worker; `cost` is its padded token count. */
  run(batch: OnnxBatch, cost: number): Promise<OnnxRunResult> {
    if (this.#closing) return Promise.reject(wnwError('WNW_ERR_OP_ABORTED', 'ONNX scorer is closed'));
    let chosen: Slot | undefined;
    for (const slot of this.#slots) {
      if (!slot.failure && (!chosen || slot.load < chosen.load)) chosen = slot;
    }
    if (!chosen) {
      return Promise.reject(this.#slots[0]?.failure ?? wnwError('WNW_ERR_OP_INTERNAL', 'no ONNX worker'));
    }
    const slot = chosen;
    const id = this.#nextId++;
    const request: OnnxRunRequest = { type: 'run', id, ...batch };
    const promise = new Promise<OnnxRunResult>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref();
      slot.pending.set(id, { resolve, reject });
      slot.load += cost;
      slot.worker.postMessage(request, [batch.ids.buffer as ArrayBuffer, batch.lengths.buffer as ArrayBuffer]);
    });
    const done = () => {
      slot.load -= cost;
      slot.pending.delete(id);
      if (slot.pending.size === 0) slot.worker.unref();
      this.#inFlight.delete(settled);
    };
    const settled = promise.then(done, done);
    this.#inFlight.add(settled);
    return promise;
  }

  /** Lets the runs in flight finish, then terminates every worker; idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#inFlight]);
      await Promise.all(this.#slots.map((slot) => slot.worker.terminate()));
    })();
    return this.#closing;
  }

  #listen(slot: Slot): void {
    slot.worker.on('message', (message: OnnxWorkerMessage) => {
      if (message.type !== 'result' && message.type !== 'error') return;
      const pending = slot.pending.get(message.id);
      if (!pending) return;
      if (message.type === 'result') pending.resolve({ dims: message.dims, values: message.values });
      else {
        pending.reject(
          wnwError('WNW_ERR_SCORE_MODEL', `ONNX Runtime failed on ${this.#modelPath}: ${message.message}`, {
            details: { file: this.#modelPath },
          }),
        );
      }
    });
    slot.worker.on('error', (error) => this.#fail(slot, toWinnowerError(error)));
    slot.worker.on('exit', (code) => {
      if (!this.#closing) this.#fail(slot, wnwError('WNW_ERR_OP_INTERNAL', `ONNX worker exited (code ${code})`));
    });
  }

  #fail(slot: Slot, error: WinnowerError): void {
    slot.failure ??= error;
    for (const pending of slot.pending.values()) pending.reject(error);
  }
}

function waitReady(worker: Worker, modelPath: string): Promise<OnnxSessionInfo> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: OnnxWorkerMessage) => {
      if (message.type === 'ready') {
        cleanup();
        resolve({ inputNames: message.inputNames, outputNames: message.outputNames, outputName: message.outputName });
      } else if (message.type === 'load-error') {
        cleanup();
        reject(wnwError('WNW_ERR_SCORE_MODEL', `cannot load ${modelPath}: ${message.message}`, { details: { file: modelPath } }));
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(
        wnwError('WNW_ERR_SCORE_MODEL', `ONNX worker failed to start for ${modelPath}: ${error.message}`, {
          cause: error,
          details: { file: modelPath },
        }),
      );
    };
    const onExit = (code: number) => {
      cleanup();
      reject(
        wnwError('WNW_ERR_SCORE_MODEL', `ONNX worker exited (code ${code}) before loading ${modelPath}`, {
          details: { file: modelPath },
        }),
      );
    };
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}
