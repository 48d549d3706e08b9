"""``GET /v1/algorithms``: the algorithm catalogue (:data:`worker.catalogue.CATALOGUE`)."""

from __future__ import annotations

from fastapi import APIRouter

from service.deps import Tenant
from service.models import AlgorithmList, AlgorithmView
from service.problems import problem_responses
from worker.catalogue import CATALOGUE, algorithm_names

router = APIRouter(prefix="/v1", tags=["algorithms"], responses=problem_responses(401, 503))


@router.get("/algorithms", response_model=AlgorithmList)
def list_algorithms(_tenant: Tenant) -> AlgorithmList:
    """The names ``solver.algorithm`` accepts and each algorithm's traits (any tenant)."""
    return AlgorithmList(names=list(algorithm_names()), algorithms=[
        AlgorithmView(name=name, options=record.options, rates=record.rates,
                      networks=record.networks, needs_l2=record.needs_l2)
        for name, record in CATALOGUE.items()])
