"""A throwaway TLS setup for the benchmarks that scrape `--serve --web-config`.

`make(dir, users)` writes, in `dir` (a temporary directory the caller removes): a CA, a server
certificate for IP 127.0.0.1 signed by it (both ECDSA P-256, made by `openssl`), and a web config
`web.yml` naming them, with basic auth for `users` (name: password; bcrypt at COST, as
`htpasswd -nBC 10` makes them) when given. Nothing here is kept or committed.
"""
import base64
import os
import shutil
import ssl
import subprocess
import sys
import warnings

COST = 10


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def bcrypt_hash(password, cost=COST):
    """A bcrypt hash of `password`: through libcrypt (Python's `crypt`, up to 3.12), else the
    `bcrypt` module, else `htpasswd`."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt
        h = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << cost))
        if h and h.startswith("$2"):
            return h
    except ImportError:
        pass
    try:
        import bcrypt
        return bcrypt.hashpw(password.encode(), bcrypt.gensalt(cost)).decode()
    except ImportError:
        pass
    if shutil.which("htpasswd"):
        out = subprocess.run(["htpasswd", "-nbBC", str(cost), "u", password],
                             check=True, capture_output=True, text=True).stdout
        return out.strip().split(":", 1)[1]
    sys.exit("no way to make a bcrypt hash: Python's crypt, the bcrypt module or htpasswd")


def make(d, users=None):
    """Writes the CA, the server's certificate and key and web.yml in `d`; the config's path."""
    if not shutil.which("openssl"):
        sys.exit("openssl is needed to make the throwaway certificates")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=bench CA", cwd=d)
    openssl("req", *ec, "-keyout", "server-key.pem", "-out", "server.csr",
            "-subj", "/CN=127.0.0.1", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext", cwd=d)
    yaml = "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n"
    if users:
        yaml += "basic_auth_users:\n"
        for name, password in users.items():
            yaml += f"  {name}: '{bcrypt_hash(password)}'\n"
    path = os.path.join(d, "web.yml")
    with open(path, "w") as f:
        f.write(yaml)
    return path


def client_context(d):
    """A client context that trusts only the CA in `d` and checks the name (127.0.0.1)."""
    ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.pem"))
    ctx.check_hostname = True
    return ctx


def authorization(user, password):
    """The `Authorization` header line for basic auth."""
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return f"Authorization: Basic {token}\r\n"
