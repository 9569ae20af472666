/**
 * Image references in skopeo's transport syntax, as users know them: a registry reference
 * (`name:tag`, `name@sha256:…`, `docker://…`), an OCI layout (`oci:<dir>[:<tag>]`), an OCI archive
 * (`oci-archive:<file>[:<tag>]`) or a `docker save` archive (`docker-archive:<file>[:<ref>]`).
 * Parsed once, before anything runs, so a bad reference is a 400 naming it, not a skopeo error.
 */
import { isAbsolute, resolve } from 'node:path';
import { wnwError } from '../errors.js';

export type ImageTransport = 'docker' | 'oci' | 'oci-archive' | 'docker-archive';

export interface ImageReference {
  transport: ImageTransport;
  /** Host path of an OCI layout or archive (the local transports); undefined for a registry. */
  path?: string;
  /** The argument skopeo takes (`docker://host/name:tag`, `oci:/abs/dir:tag`, ...). */
  skopeo: string;
  /** As the user wrote it, for messages. */
  display: string;
  /** Registry host (with port) of a docker reference; undefined means Docker Hub. */
  registry?: string;
}

// distribution/reference grammar: lowercase path components, a tag of at most 128 characters, a digest.
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:]+\])(?::[0-9]{1,5})?$/;
/** Transports skopeo has that this provider does not take, with what to do instead. */
const OTHER_TRANSPORTS: Record<string, string> = {
  'docker-daemon':
    'the local provider talks to no Docker daemon: `docker save` the image and give docker-archive:<file>, or use the docker provider',
  'containers-storage': 'the local provider does not read podman/CRI-O storage: `podman save` the image and give docker-archive:<file>',
  dir: 'give an OCI layout (oci:<dir>:<tag>) instead of a skopeo dir: folder',
};

/** Parses `text` (WNW_ERR_INPUT_INVALID naming `field` when it is not a reference). */
export function parseImageReference(text: string, field = 'image', cwd = process.cwd()): ImageReference {
  const bad = (why: string): never => {
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: ${JSON.stringify(text)} is not an image reference: ${why}`, {
      details: { field, image: text },
    });
  };
  if (typeof text !== 'string' || text.trim() !== text || text === '' || /[\0\n\r]/.test(text))
    bad('empty, or with spaces or control characters around it');
  const colon = text.indexOf(':');
  const prefix = colon > 0 ? text.slice(0, colon) : '';
  if (prefix in OTHER_TRANSPORTS) bad(OTHER_TRANSPORTS[prefix]!);
  if (prefix === 'docker') {
    if (!text.startsWith('docker://')) bad('write docker://<name>[:tag]');
    return dockerReference(text.slice('docker://'.length), text, bad);
  }
  if (prefix === 'oci' || prefix === 'oci-archive' || prefix === 'docker-archive') {
    // skopeo splits <path>[:<ref>] at the first colon: a path cannot hold one.
    const rest = text.slice(colon + 1);
    const split = rest.indexOf(':');
    const path = split >= 0 ? rest.slice(0, split) : rest;
    const ref = split >= 0 ? rest.slice(split + 1) : '';
    if (path === '') bad(`give ${prefix}:<path>`);
    if (split >= 0 && ref === '') bad('an empty tag after the path');
    const absolute = isAbsolute(path) ? path : resolve(cwd, path);
    return { transport: prefix, path: absolute, skopeo: `${prefix}:${absolute}${ref ? `:${ref}` : ''}`, display: text };
  }
  return dockerReference(text, text, bad);
}

function dockerReference(ref: string, display: string, bad: (why: string) => never): ImageReference {
  let name = ref;
  let digest: string | undefined;
  const at = name.indexOf('@');
  if (at >= 0) {
    digest = name.slice(at + 1);
    name = name.slice(0, at);
    if (!DIGEST.test(digest)) bad(`${digest} is not a digest (algorithm:hex)`);
  }
  let tag: string | undefined;
  const lastColon = name.lastIndexOf(':');
  if (lastColon > name.lastIndexOf('/')) {
    tag = name.slice(lastColon + 1);
    name = name.slice(0, lastColon);
    if (!TAG.test(tag)) bad(`${tag} is not a tag`);
  }
  const parts = name.split('/');
  // Docker's rule: the first part is a registry when it has a dot or a port, or is localhost.
  const first = parts[0] ?? '';
  const registry = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost') ? first : undefined;
  if (registry !== undefined) {
    parts.shift();
    if (!HOST.test(registry)) bad(`${registry} is not a registry host`);
  }
  if (parts.length === 0 || parts.some((part) => !COMPONENT.test(part)))
    bad('the repository name must be lowercase letters, digits and separators (. _ -), parts joined by /');
  return { transport: 'docker', skopeo: `docker://${ref}`, display, ...(registry !== undefined ? { registry } : {}) };
}

/** Loopback registries are plain HTTP in every test set-up (Docker treats 127.0.0.0/8 as insecure too). */
export function isLoopbackRegistry(registry: string | undefined): boolean {
  if (!registry) return false;
  const host = registry.startsWith('[') ? registry.slice(1, registry.indexOf(']')) : registry.replace(/:\d+$/, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
