# One image for the api, the worker and the one-shot migrate job (`sng api|worker|migrate`).
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md requirements.lock ./
COPY domain domain
COPY wire wire
COPY core core
COPY db db
COPY activities activities
COPY workflows workflows
COPY api api
COPY sdk sdk
COPY devtools devtools
COPY bench bench
COPY sng sng
COPY worker.py worker.py
# The runtime dependencies at the versions requirements.lock pins (its dev tools stay out).
RUN pip install --no-cache-dir -c requirements.lock .
USER nobody
CMD ["sng", "api"]
