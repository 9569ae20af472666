/**
 * The seccomp filter of local sandboxes: a classic-BPF program (struct sock_filter[], what
 * bubblewrap's `--seccomp FD` loads) written here, nothing downloaded or compiled elsewhere.
 *
 * Deny list, the rest allowed: what a sandbox has no use for and the kernel's attack surface
 * lives in (mounts and the new mount API, keyrings, bpf, kernel modules, kexec, ptrace and
 * cross-process memory, perf events, userfaultfd, io_uring, setns), and new user namespaces:
 * `unshare` and `clone` with CLONE_NEWUSER in their flags. `clone3` passes its flags in memory,
 * which a filter cannot read, so it gets ENOSYS and libc falls back to `clone`. Denied calls fail
 * with EPERM. x86_64 and aarch64 each get their syscall numbers; x32 calls on x86_64 and any other
 * architecture (i386 through int 0x80) get ENOSYS for every call, so no number slips past the list.
 */

/** Syscalls refused with EPERM, by architecture (numbers from the kernel's ABI headers). */
const DENIED: Record<string, { x86_64: number; aarch64: number }> = {
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  open_tree: { x86_64: 428, aarch64: 428 },
  move_mount: { x86_64: 429, aarch64: 429 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  keyctl: { x86_64: 250, aarch64: 219 },
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  bpf: { x86_64: 321, aarch64: 280 },
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  ptrace: { x86_64: 101, aarch64: 117 },
  process_vm_readv: { x86_64: 310, aarch64: 270 },
  process_vm_writev: { x86_64: 311, aarch64: 271 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  io_uring_setup: { x86_64: 425, aarch64: 425 },
  io_uring_enter: { x86_64: 426, aarch64: 426 },
  io_uring_register: { x86_64: 427, aarch64: 427 },
  setns: { x86_64: 308, aarch64: 268 },
};

/** Syscalls allowed unless their first argument (the flags) has CLONE_NEWUSER. */
const FLAG_CHECKED = { unshare: { x86_64: 272, aarch64: 97 }, clone: { x86_64: 56, aarch64: 220 } };
const CLONE3 = { x86_64: 435, aarch64: 435 };

export const DENIED_SYSCALLS: readonly string[] = Object.keys(DENIED);

/** The descriptor bwrap reads the filter from in the launch chain (3: status, 4: a long command). */
export const SECCOMP_FD = 5;

const ARCHES = [
  { name: 'x86_64', audit: 0xc000003e },
  { name: 'aarch64', audit: 0xc00000b7 },
] as const;

const CLONE_NEWUSER = 0x10000000;
/** x32 system calls on x86_64 carry this bit in their number. */
const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;
const ENOSYS = 38;

// Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const retErrno = (errno: number): number => 0x00050000 | errno;

// struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian: the low half of args[0] first).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

type Target = string;
type Instruction =
  | { op: 'ld'; offset: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; jt: Target | null; jf: Target | null }
  | { op: 'ret'; k: number }
  | { op: 'label'; name: Target };

/**
 * The filter as bwrap's --seccomp reads it: sock_filter records, 8 bytes each, in the byte order
 * of x86_64 and aarch64 (little-endian). Undefined on other architectures, which the filter would
 * lock out entirely: sandboxes there run without one (describe() says so).
 */
export function seccompProgram(): Buffer | undefined {
  if (process.arch !== 'x64' && process.arch !== 'arm64') return undefined;
  cached ??= assemble(program());
  return cached;
}
let cached: Buffer | undefined;

function program(): Instruction[] {
  const code: Instruction[] = [{ op: 'ld', offset: OFFSET_ARCH }];
  for (const arch of ARCHES) code.push({ op: 'jeq', k: arch.audit, jt: arch.name, jf: null });
  code.push({ op: 'ret', k: retErrno(ENOSYS) });
  for (const arch of ARCHES) {
    code.push({ op: 'label', name: arch.name }, { op: 'ld', offset: OFFSET_NR });
    if (arch.name === 'x86_64') code.push({ op: 'jge', k: X32_SYSCALL_BIT, jt: 'enosys', jf: null });
    for (const numbers of Object.values(DENIED)) code.push({ op: 'jeq', k: numbers[arch.name], jt: 'eperm', jf: null });
    code.push({ op: 'jeq', k: CLONE3[arch.name], jt: 'enosys', jf: null });
    for (const numbers of Object.values(FLAG_CHECKED)) code.push({ op: 'jeq', k: numbers[arch.name], jt: 'flags', jf: null });
    code.push({ op: 'ret', k: RET_ALLOW });
  }
  code.push(
    { op: 'label', name: 'flags' },
    { op: 'ld', offset: OFFSET_ARG0_LOW },
    { op: 'jset', k: CLONE_NEWUSER, jt: 'eperm', jf: null },
    { op: 'ret', k: RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', k: retErrno(EPERM) },
    { op: 'label', name: 'enosys' },
    { op: 'ret', k: retErrno(ENOSYS) },
  );
  return code;
}

/** Resolves labels into BPF's forward jump offsets (null: the next instruction) and encodes. */
function assemble(code: Instruction[]): Buffer {
  const labels = new Map<Target, number>();
  const real: Exclude<Instruction, { op: 'label' }>[] = [];
  for (const instruction of code) {
    if (instruction.op === 'label') labels.set(instruction.name, real.length);
    else real.push(instruction);
  }
  const out = Buffer.alloc(real.length * 8);
  const jump = (from: number, target: Target | null): number => {
    if (target === null) return 0;
    const offset = labels.get(target)! - (from + 1);
    if (!(offset >= 0 && offset <= 255)) throw new Error(`seccomp filter: jump to ${target} out of range (${offset})`);
    return offset;
  };
  real.forEach((instruction, index) => {
    const at = index * 8;
    const [code, jt, jf, k] =
      instruction.op === 'ld'
        ? [LD_W_ABS, 0, 0, instruction.offset]
        : instruction.op === 'ret'
          ? [RET_K, 0, 0, instruction.k]
          : [
              { jeq: JEQ_K, jge: JGE_K, jset: JSET_K }[instruction.op],
              jump(index, instruction.jt),
              jump(index, instruction.jf),
              instruction.k,
            ];
    out.writeUInt16LE(code, at);
    out.writeUInt8(jt, at + 2);
    out.writeUInt8(jf, at + 3);
    out.writeUInt32LE(k >>> 0, at + 4);
  });
  return out;
}
