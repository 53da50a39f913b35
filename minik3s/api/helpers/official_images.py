"""The repositories of Docker Hub's official namespace, `docker.io/library/` (layer L2 data):
the Docker Official Images, current and retired ones that still pull (177 names).

Why: the simulated registries (minik3s.api.helpers.image_reference) refuse `nginxx` as Docker Hub
does (`pull access denied, repository does not exist`) while `nginx` pulls. Gathered from the
docker-library projects' published image documentation and Docker's own lists of official
images; `scratch` (reserved, never pullable) and `opensuse` (no tags left) are left out.
A name missing here would fail to pull although Hub has it: add it.
"""

OFFICIAL_IMAGES = frozenset({
    "adminer", "adoptopenjdk", "aerospike", "almalinux", "alpine", "alt", "amazoncorretto", "amazonlinux",
    "api-firewall", "arangodb", "archlinux", "azul-zulu", "backdrop", "bash", "bonita", "buildpack-deps",
    "busybox", "caddy", "cassandra", "celery", "centos", "chronograf", "cirros", "clearlinux", "clefos",
    "clickhouse", "clojure", "composer", "consul", "convertigo", "couchbase", "couchdb", "crate", "crux",
    "dart", "debian", "django", "docker", "docker-dev", "drupal", "eclipse-mosquitto", "eclipse-temurin",
    "eggdrop", "elasticsearch", "elixir", "emqx", "erlang", "euleros", "express-gateway", "fedora", "flink",
    "fluentd", "friendica", "fsharp", "gazebo", "gcc", "geonetwork", "ghost", "glassfish", "golang", "gradle",
    "groovy", "haproxy", "haskell", "haxe", "hello-seattle", "hello-world", "hipache", "hitch", "hola-mundo",
    "httpd", "hylang", "ibm-semeru-runtimes", "ibmjava", "influxdb", "iojs", "irssi", "java", "jenkins",
    "jetty", "jobber", "joomla", "jruby", "julia", "kaazing-gateway", "kapacitor", "kibana", "known", "kong",
    "krakend", "lightstreamer", "liquibase", "logstash", "mageia", "mariadb", "matomo", "maven", "mediawiki",
    "memcached", "mongo", "mongo-express", "monica", "mono", "mysql", "nats", "nats-streaming", "neo4j",
    "neurodebian", "nextcloud", "nginx", "node", "notary", "nuxeo", "odoo", "open-liberty", "openjdk",
    "oraclelinux", "orientdb", "owncloud", "percona", "perl", "photon", "php", "php-zendserver", "phpmyadmin",
    "piwik", "plone", "postfixadmin", "postgres", "pypy", "python", "r-base", "rabbitmq", "rails",
    "rakudo-star", "rapidoid", "redis", "redmine", "registry", "rethinkdb", "rocket.chat", "rockylinux",
    "ros", "ruby", "rust", "sapmachine", "satosa", "sentry", "silverpeas", "sl", "solr", "sonarqube",
    "sourcemage", "spark", "spiped", "storm", "swarm", "swift", "swipl", "teamspeak", "telegraf", "thrift",
    "tomcat", "tomee", "traefik", "ubuntu", "ubuntu-debootstrap", "ubuntu-upstart", "unit", "varnish",
    "vault", "websphere-liberty", "wordpress", "xwiki", "yourls", "znc", "zookeeper"
})
