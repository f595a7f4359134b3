#!/usr/bin/env node
// Runs a command, then writes the CPU seconds it used (it and every process under it) to file
// descriptor 3 and exits as it did. The test command runs some stages side by side; its own count
// of its finished children's CPU cannot tell those stages apart.
//
//   node scripts/with-cpu.mjs <command> [args...]    (fd 3 open for writing)
import { spawn } from 'node:child_process';
import { readFileSync, writeSync } from 'node:fs';

const [file, ...args] = process.argv.slice(2);
const child = spawn(file, args, { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.once('error', (error) => {
  console.error(`could not start ${file}: ${error.message}`);
  process.exit(127);
});
child.once('exit', (code, signal) => {
  try {
    // cutime and cstime: the CPU of this process's children, every one reaped by now.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    writeSync(3, String((Number(fields[13]) + Number(fields[14])) / 100));
  } catch {
    // Not Linux: the stage's CPU stays unknown.
  }
  process.exit(code ?? (signal === 'SIGINT' ? 130 : 143));
});
