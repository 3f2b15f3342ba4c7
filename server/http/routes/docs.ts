import fs from 'node:fs';
import path from 'node:path';
import { Router, type Response } from 'express';

/**
 * `/openapi.json`, Swagger UI at `/docs` and ReDoc at `/redoc`. Every script, style and image
 * is served from the installed packages, so the pages work with no internet access. Asset
 * URLs are relative, so the pages also work behind the dashboard's `/api` proxy.
 */

const swaggerUiDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** ReDoc's bundle fetches its attribution logo from a CDN; the page must not leave the machine. */
const REDOC_REMOTE_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';
let redocBundle: string | undefined;

function localRedocBundle(): string {
  redocBundle ??= fs
    .readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8')
    .replaceAll(REDOC_REMOTE_LOGO, 'redoc/logo-mini.svg');
  return redocBundle;
}

const PAGE_SECURITY = [
  "default-src 'self'",
  "script-src 'self'",
  // Both viewers style themselves with inline style attributes and injected <style> tags.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  // ReDoc runs its search index in a worker it creates from a blob.
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'self'",
].join('; ');

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

const SWAGGER_PAGE = page(
  'Greenlight API — explorer',
  '<link rel="stylesheet" href="docs/swagger-ui.css">\n<link rel="icon" type="image/png" href="docs/favicon-32x32.png">',
  '<div id="swagger-ui"></div>\n<script src="docs/swagger-ui-bundle.js"></script>\n<script src="docs/init.js"></script>',
);

const SWAGGER_INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: new URL('openapi.json', document.baseURI).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false
  });
});
`;

const REDOC_PAGE = page(
  'Greenlight API — reference',
  '<style>body { margin: 0; padding: 0; }</style>\n<link rel="icon" type="image/png" href="docs/favicon-32x32.png">',
  '<redoc spec-url="openapi.json" hide-hostname="true"></redoc>\n<script src="redoc/redoc.standalone.js"></script>',
);

function sendPage(res: Response, html: string): void {
  // The page's own frame-ancestors rule stands; the API's blanket X-Frame-Options would contradict it.
  res.removeHeader('X-Frame-Options');
  res.set('Content-Security-Policy', PAGE_SECURITY).type('html').send(html);
}

export function docsRoutes(document: () => Record<string, unknown>): Router {
  const router = Router({ strict: true });

  /**
   * @openapi
   * /openapi.json:
   *   get:
   *     operationId: getOpenApiDocument
   *     tags: [documentation]
   *     summary: This OpenAPI 3.0 document
   *     security: []
   *     responses:
   *       '200':
   *         description: The document.
   *         content:
   *           application/json:
   *             schema: { type: object }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   */
  router.get('/openapi.json', (_req, res) => {
    res.json(document());
  });

  router.get('/docs', (_req, res) => sendPage(res, SWAGGER_PAGE));
  router.get('/docs/', (_req, res) => res.redirect(301, '../docs'));
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(SWAGGER_INIT);
  });
  for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']) {
    // Static and versioned with the package: the one kind of answer worth caching (the API's default is no-store).
    router.get(`/docs/${file}`, (_req, res) => {
      res.removeHeader('Cache-Control');
      res.sendFile(path.join(swaggerUiDir, file), { maxAge: '1d' });
    });
  }

  router.get('/redoc', (_req, res) => sendPage(res, REDOC_PAGE));
  router.get('/redoc/', (_req, res) => res.redirect(301, '../redoc'));
  router.get('/redoc/redoc.standalone.js', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=86400').type('application/javascript').send(localRedocBundle());
  });
  router.get('/redoc/logo-mini.svg', (_req, res) => res.type('image/svg+xml').send(EMPTY_SVG));

  return router;
}
