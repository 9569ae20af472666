/** Whether a process exists (EPERM: it does, under another user); used to sweep what dead processes left behind. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
