/**
 * The operator console: sign in with an operator token, then the views over the host's
 * operator endpoints (console/src/views/), kept current by one live update stream. Every value
 * from the host is rendered as text (Preact escapes it); nothing is ever inserted as HTML.
 */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { describeFailure } from './format.js';
import { forgetToken, saveToken, savedToken } from './session.js';
import { Shell } from './views/shell.js';
import { SignIn } from './views/signin.js';

function App() {
  const [token, setToken] = useState<string | undefined>(savedToken());
  const [notice, setNotice] = useState<string>();
  const signOut = (failure?: unknown) => {
    forgetToken();
    setToken(undefined);
    setNotice(failure === undefined ? undefined : describeFailure(failure));
  };
  if (!token) return <SignIn notice={notice} onSignIn={(value) => (saveToken(value), setNotice(undefined), setToken(value))} />;
  return <Shell token={token} onSignOut={signOut} />;
}

render(<App />, document.getElementById('app')!);
