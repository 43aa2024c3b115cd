import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { openBackend } from './open-backend';
import { createPlaygroundApp } from './playground-app';
import { PACKAGE_DIRECTORY, type PlaygroundConfig } from './playground-config';

/**
 * Development mode: the API plus Vite's dev server (hot reload) on one port. Returns the URL.
 */
export async function startDevelopmentServer(config: PlaygroundConfig): Promise<string> {
  const { createServer: createViteServer } = await import('vite');
  const vite = await createViteServer({
    configFile: `${PACKAGE_DIRECTORY}vite.config.ts`,
    root: `${PACKAGE_DIRECTORY}src/client`,
    server: { middlewareMode: true },
    appType: 'spa',
  });
  const backend = await openBackend(config.store);
  const app = createPlaygroundApp({
    store: backend.store,
    storeDescription: backend.description,
    model: config.model,
    defaultUserId: config.defaultUserId,
  });
  const api = getRequestListener(app.fetch);
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/api/')) api(request, response);
    else vite.middlewares(request, response);
  });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const address = server.address() as AddressInfo;
  return `http://${config.host}:${address.port}/`;
}
