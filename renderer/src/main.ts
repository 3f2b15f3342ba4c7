import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import { provideApi } from './api';
import { ApiClient } from './api/client';
import { useSessionStore } from './stores/session';
import './styles.css';

const pinia = createPinia();
const app = createApp(App).use(pinia);
const session = useSessionStore(pinia);

// The dashboard server forwards /api to the API, so the page talks to its own origin only.
provideApi(new ApiClient({ baseUrl: '/api', apiKey: () => session.apiKey }));

app.mount('#app');
