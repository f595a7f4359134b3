#!/usr/bin/env node
/**
 * The operator CLI (`agenticdriver`; the commands are in ./program.ts). Success output goes to
 * stdout; a failure goes to stderr (./output.ts) with exit 1. Bare `agenticdriver` and bare
 * command groups print their help and exit 0.
 */
import { readFileSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import { DriverError } from '../protocol/errors.js';
import { fail } from './output.js';
import { buildProgram } from './program.js';

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const program = buildProgram(packageVersion);
// Commander writes a group's help to stderr before it ends with "(outputHelp)"; kept here to
// print on stdout instead. Its error messages are ours to print (fail()).
let helpText = '';
const quiet = (command: Command): void => {
  command.configureOutput({ writeErr: (text) => void (helpText += text), outputError: () => undefined });
  command.commands.forEach(quiet);
};
quiet(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.help' && helpText) {
      process.stdout.write(helpText);
      process.exit(0);
    }
    if (error.exitCode === 0) process.exit(0);
    fail(new DriverError('INVALID_ARGUMENT', error.message.replace(/^error: /, '')));
  }
  fail(error);
}
