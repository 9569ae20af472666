/**
 * Minimal zod schemas of the Docker Engine API answers winnower reads (the same from API 1.25
 * through 1.47): only the fields the client uses.
 */
import { z } from 'zod';

/** Every error answer: `{"message": "..."}`. */
export const DockerErrorBody = z.object({ message: z.string() });

/** POST /containers/create → 201 */
export const DockerCreateResponse = z.object({
  Id: z.string().min(1),
  Warnings: z.array(z.string()).nullish(),
});

/** POST /containers/{id}/exec → 201 */
export const DockerIdResponse = z.object({ Id: z.string().min(1) });

/** GET /exec/{id}/json */
export const DockerExecInspect = z.object({
  Running: z.boolean(),
  ExitCode: z.number().int().nullable(),
  Pid: z.number().int().optional(),
});

/** GET /containers/{id}/json (the part about the container's state) */
export const DockerContainerInspect = z.object({
  State: z.object({
    Running: z.boolean(),
    Status: z.string().optional(),
    OOMKilled: z.boolean().optional(),
    ExitCode: z.number().int().optional(),
    Error: z.string().optional(),
  }),
});

/** GET /containers/{id}/json?size=1 (the bytes the container wrote; absent on some engines) */
export const DockerContainerSize = z.object({ SizeRw: z.number().nullish() });

/** The `X-Docker-Container-Path-Stat` header of GET/HEAD /containers/{id}/archive, base64 JSON. */
export const DockerPathStat = z.object({
  name: z.string(),
  size: z.number(),
  /** A Go os.FileMode: permission bits plus type bits (directory 1<<31, symlink 1<<27). */
  mode: z.number(),
  mtime: z.string().optional(),
  linkTarget: z.string().optional(),
});
export type DockerPathStat = z.infer<typeof DockerPathStat>;

/** GET /version */
export const DockerVersion = z.object({
  Version: z.string(),
  ApiVersion: z.string(),
  /** The oldest API version the engine accepts (absent on some engines). */
  MinAPIVersion: z.string().optional(),
  Os: z.string().optional(),
  Arch: z.string().optional(),
});

/** Go os.ModeDir and os.ModeSymlink as they appear in DockerPathStat.mode. */
export const GO_MODE_DIR = 2 ** 31;
export const GO_MODE_SYMLINK = 2 ** 27;

/** Whether a Go FileMode has the given type bit (bit operators would overflow at 1<<31). */
export function hasModeBit(mode: number, bit: number): boolean {
  return Math.floor(mode / bit) % 2 === 1;
}
