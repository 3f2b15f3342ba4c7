import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import { provideApi } from './api';
import { ApiClient } from './api/client';
import { desktopBridge } from './desktop';
import { useAlertsStore } from './stores/alerts';
import { useSessionStore } from './stores/session';
import './styles.css';
import './console.css';
import './diffs.css';

/** How long to wait between tries to reach the API at start-up, at most. */
const MAX_RETRY_MS = 10_000;

const pinia = createPinia();
const app = createApp(App).use(pinia);
const session = useSessionStore(pinia);

// The dashboard server forwards /api to the API, so the page talks to its own origin only.
const api = new ApiClient({ baseUrl: '/api', apiKey: () => session.apiKey, csrfToken: () => session.account?.csrf_token ?? null });
provideApi(api);

/** Which edition answers (it decides between the key prompt and signing in), and who is signed in. */
async function learnWhoIsAsking(): Promise<void> {
  for (let attempt = 0; session.edition === null; attempt++) {
    try {
      session.edition = await api.edition();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, MAX_RETRY_MS)));
    }
  }
  if (!session.hosted) return;
  try {
    session.signedIn(await api.currentSession());
  } catch {
    session.signedOut();
  }
}

async function start(): Promise<void> {
  const desktop = desktopBridge();
  if (desktop) {
    // In the desktop app the key comes from the shell; the person is never asked for it.
    const key = await desktop.getApiKey();
    if (key) session.useKey(key);
    const alerts = useAlertsStore(pinia);
    desktop.onOpenReview((reviewId) => {
      alerts.requestedReview = reviewId;
    });
  }
  app.mount('#app');
  await learnWhoIsAsking();
}

void start();
