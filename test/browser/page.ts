/**
 * A page for a browser test: an ES module bundled for the browser by esbuild, served with a
 * page that imports it from its own loopback origin (each call a new origin) and exposes it as
 * `window[global]`; the page's title becomes `ready` once it has.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build, type BuildOptions } from 'esbuild';

export interface ModulePage {
  origin: string;
  server: Server;
}

/** Bundles `entry` (an entry file, or module source resolved from the repository) for the browser. */
export async function bundleForBrowser(entry: Pick<BuildOptions, 'entryPoints' | 'stdin'>): Promise<string> {
  const result = await build({ ...entry, bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent' });
  return result.outputFiles[0]!.text;
}

export async function serveModulePage(bundle: string, global: string): Promise<ModulePage> {
  const page = `<!doctype html><meta charset="utf-8"><title>${global}</title>
<script type="module">import * as module from '/module.js'; window.${global} = module; document.title = 'ready';</script>`;
  const server = createServer((request, response) => {
    if (request.url === '/module.js') return void response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Closes the pages' servers, their kept-alive connections first (a browser holds them open). */
export async function closeModulePages(...pages: (ModulePage | undefined)[]): Promise<void> {
  for (const page of pages) page?.server.closeAllConnections();
  await Promise.all(pages.map((page) => page && new Promise((resolve) => page.server.close(resolve))));
}
