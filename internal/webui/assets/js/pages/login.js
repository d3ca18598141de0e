// The login form: the API key is sent once, in the body of
// POST /api/ui/login, and exchanged for an HttpOnly session cookie. The
// key is not kept anywhere in the page.

import { api, ApiError } from '../api.js';
import { h, replace, field, setFieldError } from '../dom.js';

export default function login(root, reason, done) {
  const key = h('input', { type: 'password', name: 'key', autocomplete: 'current-password', required: true, autofocus: true, spellcheck: 'false' });
  const submit = h('button', { class: 'btn primary', type: 'submit' }, 'Log in');
  const msg = h('div', { role: 'alert' });
  const form = h('form', { novalidate: true },
    field('API key', key, { name: 'key', help: 'The api_key of config.toml, or a [[principals]] key. It is exchanged for a session cookie and not stored in the browser.' }),
    msg,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    setFieldError(form, null);
    replace(msg);
    submit.disabled = true;
    try {
      const info = await api.post('/api/ui/login', { key: key.value });
      key.value = '';
      done(info);
    } catch (err) {
      if (err instanceof ApiError && err.field) setFieldError(form, err.field, err.message);
      else replace(msg, h('div', { class: 'error-box' }, err.message));
    } finally {
      submit.disabled = false;
    }
  });
  replace(root, h('div', { class: 'login' },
    h('main', { class: 'card', id: 'main' },
      h('h1', null, h('img', { src: '/ui/icon.svg', alt: '' }), 'agentd'),
      h('p', null, reason || 'Log in to the dashboard with an API key.'),
      form)));
  key.focus();
}
