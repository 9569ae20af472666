/**
 * The parts of an OCI image configuration a sandbox uses (Env, WorkingDir, User), read from an
 * OCI layout: index.json → the tagged manifest → its config blob (OCI image spec, image-layout.md
 * and config.md).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

export interface ImageConfig {
  /** `Env` as name → value, in the image's order. */
  env: Record<string, string>;
  /** `WorkingDir`, when the image sets one. */
  workingDir?: string;
  /** `User`, for the record: sandboxes always run as their unprivileged uid. */
  user?: string;
}

const Descriptor = z.object({
  mediaType: z.string().optional(),
  digest: z.string().regex(/^[a-z0-9]+:[0-9a-f]+$/),
  annotations: z.record(z.string(), z.string()).optional(),
});
const Index = z.object({ manifests: z.array(Descriptor) });
const Manifest = z.object({ config: Descriptor });
const Config = z.object({
  config: z.object({ Env: z.array(z.string()).nullish(), WorkingDir: z.string().nullish(), User: z.string().nullish() }).nullish(),
});

const REF_NAME = 'org.opencontainers.image.ref.name';

function blobPath(layout: string, digest: string): string {
  const [algorithm, hex] = digest.split(':') as [string, string];
  return join(layout, 'blobs', algorithm, hex);
}

async function readJson<T>(path: string, schema: z.ZodType<T>, what: string): Promise<T> {
  const parsed = schema.safeParse(JSON.parse(await readFile(path, 'utf8')));
  if (!parsed.success) throw new Error(`${what} (${path}) is not valid: ${parsed.error.issues[0]?.message ?? 'bad shape'}`);
  return parsed.data;
}

/** Reads the config of the image tagged `tag` in the OCI layout `layout`. */
export async function readLayoutConfig(layout: string, tag: string): Promise<ImageConfig> {
  const index = await readJson(join(layout, 'index.json'), Index, 'the layout index');
  const entry =
    index.manifests.find((manifest) => manifest.annotations?.[REF_NAME] === tag) ??
    (index.manifests.length === 1 ? index.manifests[0] : undefined);
  if (!entry) throw new Error(`the layout ${layout} has no image tagged ${tag}`);
  const manifest = await readJson(blobPath(layout, entry.digest), Manifest, 'the image manifest');
  const config = (await readJson(blobPath(layout, manifest.config.digest), Config, 'the image config')).config ?? {};
  return {
    env: parseEnv(config.Env ?? []),
    ...(config.WorkingDir ? { workingDir: config.WorkingDir } : {}),
    ...(config.User ? { user: config.User } : {}),
  };
}

/** `NAME=value` entries to a record; entries without `=` or with a bad name are skipped. */
export function parseEnv(entries: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? entry.slice(0, eq) : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || entry.includes('\0')) continue;
    env[name] = entry.slice(eq + 1);
  }
  return env;
}
