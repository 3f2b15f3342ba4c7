import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The preload script as one CommonJS file: a sandboxed preload may require only 'electron'. */
export default defineConfig({
  build: {
    outDir: path.resolve(here, '..', 'dist', 'preload'),
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    lib: { entry: path.join(here, 'preload.ts'), formats: ['cjs'], fileName: () => 'preload.cjs' },
    rollupOptions: { external: ['electron'] },
  },
});
