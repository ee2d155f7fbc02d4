/**
 * The dashboard's build: Vite + Preact, from `web/` into `dist/dashboard/` (committed; see
 * docs/guides/dashboard.md). Served by src/http/routes/dashboard.ts: `index.html` at `/` on the API
 * host, the hashed assets under `/dashboard/assets/`.
 */
import path from 'node:path';
import { defineConfig } from 'vite';

const root = import.meta.dirname;

export default defineConfig({
  root,
  base: '/dashboard/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
  },
  build: {
    outDir: path.resolve(root, '../dist/dashboard'),
    emptyOutDir: true,
    target: 'es2022',
    // Strict CSP: no inline scripts or data: URLs for assets.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  worker: { format: 'es' },
});
