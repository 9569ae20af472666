/**
 * Host paths bound into a sandbox (spec.mounts), checked the same way by every provider that can
 * bind them (local bubblewrap, docker Binds).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, posix } from 'node:path';
import { wnwError } from '../errors.js';
import type { SandboxMount } from './types.js';

// Mount targets may not shadow the system folders, the private /tmp folders or the workspace.
const MOUNT_FORBIDDEN_UNDER = ['/usr', '/etc', '/proc', '/dev', '/tmp', '/var/tmp', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Checks spec.mounts at create: absolute paths, sources that exist, targets clear of the rest. */
export function checkMounts(mounts: SandboxMount[], workdir: string): void {
  mounts.forEach((mount, index) => {
    const field = `spec.mounts[${index}]`;
    const bad = (what: string): never => {
      throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: ${what}`, { details: { field, source: mount.source, target: mount.target } });
    };
    if (typeof mount.source !== 'string' || !isAbsolute(mount.source) || mount.source.includes('\0'))
      bad('source must be an absolute host path');
    if (!existsSync(mount.source)) bad(`source ${mount.source} does not exist on the host`);
    const target = typeof mount.target === 'string' ? posix.normalize(mount.target) : '';
    if (!isAbsolute(target) || target === '/' || target === '/run' || target.includes('\0'))
      bad('target must be an absolute path below / (not / or /run itself)');
    if (MOUNT_FORBIDDEN_UNDER.some((dir) => target === dir || target.startsWith(`${dir}/`)))
      bad(`target ${target} is inside a system or private folder`);
    const inside = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`);
    if (inside(target, workdir) || inside(workdir, target)) bad(`target ${target} overlaps the workspace ${workdir}`);
  });
}
