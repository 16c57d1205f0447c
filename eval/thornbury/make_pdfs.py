#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/thornbury/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["thornbury/price-list"] = (
    "Thornbury Vets price list: procedures and certificates",
    "Thornbury Veterinary Group - Price list - procedures and certificates - from 1 April 2026",
    """
# Price list: procedures and certificates
Thornbury Veterinary Group. Prices from 1 April 2026 to 31 March 2027.
All prices are in pounds sterling (GBP) and include VAT at 20%.

These are our standard prices for common procedures. Every pet is differ-
ent, so the vet will give you a written estimate before any operation.
Health plan members get 10% (Essential) or 15% (Complete) off these prices.

1. NEUTERING
Procedure                          Price        Includes
Cat castration                     GBP 98       Pain relief, 1 check-up
Cat spay                           GBP 145      Pain relief, 2 check-ups
Rabbit castration                  GBP 120      Pain relief, 1 check-up
Rabbit spay                        GBP 175      Pain relief, 2 check-ups
Dog castration, up to 25 kg        GBP 265      Pain relief, buster collar
Dog castration, over 25 kg         GBP 320      Pain relief, buster collar
Dog spay, up to 25 kg              GBP 395      Pain relief, 2 check-ups
Dog spay, over 25 kg               GBP 475*     Pain relief, 2 check-ups
* Keyhole (laparoscopic) spay for dogs over 25 kg: GBP 640. Recovery
  is usually faster and we recommend it for large breeds.

We recommend neutering cats from 4 months of age, and dogs from 6
months (small breeds) or 12 months (large breeds).

2. DENTAL CARE
Scale and polish under general anaesthetic: from GBP 310. Extractions
are charged at GBP 42 each for simple extractions and GBP 95 each for
surgical extractions. Dental X-rays: GBP 85 for the full mouth.
<<PAGE>>
3. MICROCHIPS, CERTIFICATES AND TRAVEL
Item                                             Price
Microchip, inserted at any appointment           GBP 22.50
Microchip, inserted during an operation          GBP 12.00
Animal health certificate (first pet)            GBP 165.00
Animal health certificate (each extra pet)       GBP 45.00
Tapeworm treatment for travel to Ireland,
Finland, Malta or Norway, with certificate       GBP 28.00
Fit to travel letter                             GBP 40.00

Please book animal health certificates at least 2 weeks before you
travel. The certificate must be issued no more than 10 days before
you arrive in the EU.

4. END OF LIFE CARE
Euthanasia at the practice                       GBP 95
Euthanasia at home, within 5 miles               GBP 210
Communal cremation                               GBP 85 to GBP 140
Individual cremation with ashes returned         GBP 190 to GBP 330

Cremation prices depend on your pet's weight. Ashes are returned to
your practice within 3 weeks.

5. OTHER ITEMS
Nail clip (non-members)                          GBP 15
Anal gland expression (non-members)              GBP 22
Blood test, in-house general health profile      GBP 118
Kennel stay before or after surgery, per night   GBP 35

Questions about this price list: 0113 496 0500 or ask at reception.
""",
)

DOCS["roadwise/summary-of-charges"] = (
    "Roadwise Summary of Charges: airport locations",
    "Roadwise Rentals, Inc. - Summary of Charges - airport locations - revised January 15, 2026",
    """
# Summary of Charges: airport locations
Roadwise Rentals, Inc. Revised January 15, 2026.
This summary lists the taxes, fees and surcharges added to your rate
when you rent at an airport location. Amounts are in US dollars.

1. AIRPORT FEES AND SURCHARGES
Charge                              Amount             Applies to
Concession recovery fee             11.1% of charges   Time, mileage, extras
Customer facility charge            $6.00 per day      Up to 5 days
Vehicle license recovery fee        $2.15 per day      Every rental day
Energy surcharge                    $1.20 per rental   Every rental
Tire and battery fee                $0.25 per day      Every rental day

The concession recovery fee pays back the part of our revenue that
we must give to the airport for the right to operate there. The
customer facility charge pays for the shared rental car center and
its shuttle buses; it is set by the airport authority and collect-
ed by us. State and local sales taxes are added to the total.

2. ONE-WAY DROP FEES
Distance between locations          Drop fee
Under 100 miles                     $0
100 to 499 miles                    $150
500 to 999 miles                    $275
1,000 miles or more                 $425*
* Florida, Arizona and Texas from March to May: $199 for any distance,
  when the car is returned to another airport in the same state.
<<PAGE>>
3. OTHER FEES
Fee                                             Amount
Additional driver                               $13.50 per day
Young driver, ages 21 to 24                     $27 per day
Airport shuttle wheelchair van                  No charge
Vehicle delivery to a hotel                     $25 each way
Administrative fee for tolls and citations      $40 per citation
Lost key or key fob                             Up to $350

4. EXAMPLE: 4-DAY MIDSIZE RENTAL AT AN AIRPORT
Base rate, 4 days at $53                        $212.00
Concession recovery fee, 11.1%                  $23.53
Customer facility charge, 4 x $6.00             $24.00
Vehicle license recovery fee, 4 x $2.15         $8.60
Energy surcharge                                $1.20
Tire and battery fee, 4 x $0.25                 $1.00
Total before sales tax                          $270.33

Fees change from time to time. Your rental record shows the fees that
apply to your rental. Questions: 1-800-555-0171.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "thornbury make_pdfs.py")


if __name__ == "__main__":
    main()
