import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import { provideApi } from './api';
import { ApiClient } from './api/client';
import { desktopBridge } from './desktop';
import { useAlertsStore } from './stores/alerts';
import { useSessionStore } from './stores/session';
import './styles.css';

const pinia = createPinia();
const app = createApp(App).use(pinia);
const session = useSessionStore(pinia);

// The dashboard server forwards /api to the API, so the page talks to its own origin only.
provideApi(new ApiClient({ baseUrl: '/api', apiKey: () => session.apiKey }));

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
}

void start();
