import { describe, expect, it } from 'vitest';
import { startWorker, workerUrl } from '../../src/util/worker.js';

describe('workerUrl', () => {
  it('follows the extension of the calling module', () => {
    expect(workerUrl('./onnx-worker', 'file:///app/src/onnx.ts').href).toBe('file:///app/src/onnx-worker.ts');
    expect(workerUrl('./onnx-worker.js', 'file:///app/dist/onnx.js').href).toBe('file:///app/dist/onnx-worker.js');
    expect(workerUrl('./onnx-worker.js', 'file:///app/src/onnx.ts').href).toBe('file:///app/src/onnx-worker.ts');
  });
});

describe('startWorker', () => {
  it('runs a TypeScript worker beside the caller and passes workerData', async () => {
    const worker = startWorker('./fixtures/echo-worker', import.meta.url, { answer: 42 });
    try {
      const message = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(message).toEqual({ data: { answer: 42 }, typed: true });
    } finally {
      await worker.terminate();
    }
  });
});
