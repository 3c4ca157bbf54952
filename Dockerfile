# One image for the api, the worker and the one-shot migrate job (`sng api|worker|migrate`).
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md ./
COPY domain domain
COPY workflows workflows
COPY activities activities
COPY api api
COPY db db
COPY sng sng
COPY worker.py ./
RUN pip install --no-cache-dir .
USER nobody
CMD ["sng", "api"]
