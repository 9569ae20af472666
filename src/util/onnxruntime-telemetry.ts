/**
 * onnxruntime-node 1.30 starts Microsoft's 1DS telemetry on Linux and macOS when it creates its
 * environment: it writes a device id and an event cache under `~/.cache/Microsoft/DeveloperTools`,
 * opens an empty `mat-debug-<pid>.log` in the temporary folder, and uploads events to
 * mobile.events.data.microsoft.com. winnower is an offline service, so it switches that off with
 * onnxruntime's own switch, `ORT_DISABLE_TELEMETRY` (onnxruntime/core/platform/telemetry_environment.h),
 * unless the operator set the variable themselves.
 *
 * The native library reads the process environment when a worker first loads it, so this must run
 * on the main thread (a worker's `process.env` is a copy that never reaches getenv) before the
 * first ONNX worker starts.
 */
export function disableOnnxRuntimeTelemetry(env: NodeJS.ProcessEnv = process.env): void {
  env.ORT_DISABLE_TELEMETRY ??= '1';
}
